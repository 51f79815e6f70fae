"""Expert queues that stay fast as sets grow: each assignment carries its set and when it was labelled (partial
indexes key on them), and each expert's counts in a set are stored (``ExpertProgress``) instead of counted.

Existing data is filled in from the comparisons and labels before the indexes are built.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce


def backfill(apps, schema_editor):
    Comparison = apps.get_model("labelling", "Comparison")
    ComparisonSet = apps.get_model("labelling", "ComparisonSet")
    ExpertLabel = apps.get_model("labelling", "ExpertLabel")
    ExpertProgress = apps.get_model("labelling", "ExpertProgress")
    LabelAssignment = apps.get_model("labelling", "LabelAssignment")
    LabelAssignment.objects.update(
        comparison_set=Subquery(Comparison.objects.filter(pk=OuterRef("comparison_id")).values("comparison_set_id")[:1])
    )
    LabelAssignment.objects.update(
        labelled_at=Subquery(ExpertLabel.objects.filter(assignment_id=OuterRef("pk")).values("created_at")[:1])
    )
    sizes = Comparison.objects.filter(comparison_set=OuterRef("pk")).order_by().values("comparison_set")
    ComparisonSet.objects.update(size=Coalesce(Subquery(sizes.annotate(n=Count("id")).values("n")[:1]), 0))
    rows = (
        LabelAssignment.objects.values("comparison_set_id", "expert_id")
        .annotate(
            assigned=Count("id"),
            labelled=Count("labelled_at"),
            skipped=Count("id", filter=Q(skipped_at__isnull=False, labelled_at__isnull=True)),
            changed=Count("label", filter=Q(label__changed_at__isnull=False)),
        )
        .order_by()
    )
    ExpertProgress.objects.bulk_create([ExpertProgress(**row) for row in rows], batch_size=1000)
    if schema_editor.connection.vendor == "postgresql":
        # Check the deferred foreign keys of the rows just written now, so the same transaction may alter the table.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ('labelling', '0005_comparison_set_serving_order'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ExpertProgress',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('assigned', models.PositiveIntegerField(default=0, verbose_name='assigned')),
                ('labelled', models.PositiveIntegerField(default=0, verbose_name='labelled')),
                ('skipped', models.PositiveIntegerField(default=0, verbose_name='skipped')),
                ('changed', models.PositiveIntegerField(default=0, verbose_name='changed')),
            ],
            options={
                'verbose_name': 'labelling progress',
                'verbose_name_plural': 'labelling progress',
            },
        ),
        migrations.AddField(
            model_name='expertprogress',
            name='comparison_set',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='expert_progress', to='labelling.comparisonset'),
        ),
        migrations.AddField(
            model_name='expertprogress',
            name='expert',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddIndex(
            model_name='expertprogress',
            index=models.Index(fields=['expert', 'comparison_set'], name='progress_by_expert'),
        ),
        migrations.AddConstraint(
            model_name='expertprogress',
            constraint=models.UniqueConstraint(fields=('comparison_set', 'expert'), name='one_progress_per_expert_and_set'),
        ),
        migrations.RemoveIndex(
            model_name='labelassignment',
            name='label_queue_order',
        ),
        migrations.AddField(
            model_name='comparisonset',
            name='size',
            field=models.PositiveIntegerField(default=0, verbose_name='comparisons'),
        ),
        migrations.AddField(
            model_name='labelassignment',
            name='comparison_set',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='labelling.comparisonset'),
        ),
        migrations.AddField(
            model_name='labelassignment',
            name='labelled_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='labelled at'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='labelassignment',
            name='comparison_set',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='labelling.comparisonset'),
        ),
        migrations.AddIndex(
            model_name='labelassignment',
            index=models.Index(condition=models.Q(('labelled_at__isnull', True)), fields=['comparison_set', 'expert', 'position', 'id'], name='label_queue_open'),
        ),
        migrations.AddIndex(
            model_name='labelassignment',
            index=models.Index(condition=models.Q(('labelled_at__isnull', False)), fields=['comparison_set', 'expert', 'labelled_at', 'id'], name='label_queue_done'),
        ),
        migrations.AddIndex(
            model_name='labelassignment',
            index=models.Index(condition=models.Q(('labelled_at__isnull', True), ('skipped_at__isnull', False)), fields=['comparison_set', 'expert', 'position', 'id'], name='label_queue_skipped'),
        ),
        migrations.AddIndex(
            model_name='labelassignment',
            index=models.Index(fields=['expert', 'comparison_set', 'position', 'id'], name='label_queue_order'),
        ),
    ]
