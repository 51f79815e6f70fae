-- The grants of the application's role (docs/deploy.md, "The database roles"): run once by the postgres superuser
-- in the new database, after `createdb eistudio --owner eistudio_owner`. The role `eistudio` (DATABASE_URL) owns
-- nothing, so it cannot switch off the triggers that guard frozen releases; `eistudio_owner` migrates.
GRANT USAGE ON SCHEMA public TO eistudio;
ALTER DEFAULT PRIVILEGES FOR ROLE eistudio_owner IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO eistudio;
ALTER DEFAULT PRIVILEGES FOR ROLE eistudio_owner IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO eistudio;
