"""The annotation stream: the item bank, screening rounds, frozen releases and expert pairwise labels."""
