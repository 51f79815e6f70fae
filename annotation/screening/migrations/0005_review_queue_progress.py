"""Review queues that stay fast as rounds grow: each assignment carries its round and when its review was submitted
(partial indexes key on them), each reviewer's counts in a round are stored (``ReviewerProgress``) instead of
counted, and a round's size is stored when it opens.

Existing data is filled in from the round items and reviews before the indexes are built.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce


def backfill(apps, schema_editor):
    RoundItem = apps.get_model("screening", "RoundItem")
    ScreeningRound = apps.get_model("screening", "ScreeningRound")
    Review = apps.get_model("screening", "Review")
    ReviewerProgress = apps.get_model("screening", "ReviewerProgress")
    ReviewAssignment = apps.get_model("screening", "ReviewAssignment")
    ReviewAssignment.objects.update(
        round=Subquery(RoundItem.objects.filter(pk=OuterRef("round_item_id")).values("round_id")[:1])
    )
    submitted = Review.objects.filter(assignment_id=OuterRef("pk"), status="submitted").values("submitted_at")[:1]
    ReviewAssignment.objects.update(submitted_at=Subquery(submitted))
    sizes = RoundItem.objects.filter(round=OuterRef("pk")).order_by().values("round")
    ScreeningRound.objects.update(size=Coalesce(Subquery(sizes.annotate(n=Count("id")).values("n")[:1]), 0))
    decided = Q(submitted_at__isnull=False, round_item__outcome__in=["accept", "revise", "reject"])
    rows = (
        ReviewAssignment.objects.values("round_id", "reviewer_id")
        .annotate(
            assigned=Count("id"),
            submitted=Count("submitted_at"),
            skipped=Count("id", filter=Q(skipped_at__isnull=False, submitted_at__isnull=True)),
            decided=Count("id", filter=decided),
            agreed=Count("id", filter=decided & Q(review__decision=F("round_item__outcome"))),
        )
        .order_by()
    )
    ReviewerProgress.objects.bulk_create([ReviewerProgress(**row) for row in rows], batch_size=1000)
    if schema_editor.connection.vendor == "postgresql":
        # Check the deferred foreign keys of the rows just written now, so the same transaction may alter the table.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ('screening', '0004_review_changes_and_skips'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ReviewerProgress',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('assigned', models.PositiveIntegerField(default=0, verbose_name='assigned')),
                ('submitted', models.PositiveIntegerField(default=0, verbose_name='submitted')),
                ('skipped', models.PositiveIntegerField(default=0, verbose_name='skipped')),
                ('decided', models.PositiveIntegerField(default=0, verbose_name='decided')),
                ('agreed', models.PositiveIntegerField(default=0, verbose_name='agreed')),
            ],
            options={
                'verbose_name': 'review progress',
                'verbose_name_plural': 'review progress',
            },
        ),
        migrations.AddField(
            model_name='reviewerprogress',
            name='reviewer',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='reviewerprogress',
            name='round',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reviewer_progress', to='screening.screeninground'),
        ),
        migrations.AddIndex(
            model_name='reviewerprogress',
            index=models.Index(fields=['reviewer', 'round'], name='progress_by_reviewer'),
        ),
        migrations.AddConstraint(
            model_name='reviewerprogress',
            constraint=models.UniqueConstraint(fields=('round', 'reviewer'), name='one_progress_per_reviewer_and_round'),
        ),
        migrations.RemoveIndex(
            model_name='reviewassignment',
            name='review_queue_order',
        ),
        migrations.AddField(
            model_name='reviewassignment',
            name='round',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='screening.screeninground'),
        ),
        migrations.AddField(
            model_name='reviewassignment',
            name='submitted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='submitted at'),
        ),
        migrations.AddField(
            model_name='screeninground',
            name='size',
            field=models.PositiveIntegerField(default=0, editable=False, verbose_name='items'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='reviewassignment',
            name='round',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='screening.screeninground'),
        ),
        migrations.AddIndex(
            model_name='reviewassignment',
            index=models.Index(condition=models.Q(('submitted_at__isnull', True)), fields=['round', 'reviewer', 'position', 'id'], name='review_queue_open'),
        ),
        migrations.AddIndex(
            model_name='reviewassignment',
            index=models.Index(condition=models.Q(('submitted_at__isnull', False)), fields=['round', 'reviewer', 'submitted_at', 'id'], name='review_queue_done'),
        ),
        migrations.AddIndex(
            model_name='reviewassignment',
            index=models.Index(condition=models.Q(('skipped_at__isnull', False), ('submitted_at__isnull', True)), fields=['round', 'reviewer', 'position', 'id'], name='review_queue_skipped'),
        ),
        migrations.AddIndex(
            model_name='reviewassignment',
            index=models.Index(fields=['reviewer', 'round', 'position', 'id'], name='review_queue_order'),
        ),
    ]
