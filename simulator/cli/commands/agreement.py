"""`llm-sim agreement TARGET --between A B [--by FACTOR]`: how far two label sources agree."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from simulator.analysis.agreement import Agreement
from simulator.analysis.agreement_scope import check_factor, check_sources, scope_agreement
from simulator.analysis.scope import resolve_scope
from simulator.cli.context import AppContext
from simulator.domain.invisible_chars import visible

MEASURE_TITLES = {"goal": "goal label", "third": "third of the goal's turn"}


@click.command("agreement")
@click.argument("target_id", metavar="EXP_ID|SWEEP_ID|CONV_ID")
@click.option(
    "--between",
    "sources",
    nargs=2,
    required=True,
    metavar="SOURCE_A SOURCE_B",
    help="Two scorers with conversation scores, e.g. label:annotator_1 label:annotator_2, "
    "or label:adjudicated judge:prison_goal.",
)
@click.option(
    "--by",
    "by",
    metavar="FACTOR",
    help="Also per group: model (the roles' models), or a column of the conversations "
    "table such as llm_Guard or variant_Prisoner/Goal.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
@click.pass_obj
def agreement_cmd(
    app: AppContext, target_id: str, sources: tuple[str, str], by: str | None, as_json: bool
) -> None:
    """Cohen's kappa, agreement and confusion matrix between two label sources.

    Labels are compared per conversation as the prison paper's script compares its
    annotators: lower-cased and stripped; a conversation that either source left unlabelled
    is left out and counted. judge:prison_goal answers are read as the annotators' labels
    (failure -> NAN, succeeded -> Yes, attempted -> No, else NotTried).
    """
    store = app.store
    scope = resolve_scope(store, target_id)
    check_sources(store, scope, sources)
    check_factor(store, scope, by)
    found = scope_agreement(store, scope, sources[0], sources[1], by)
    results = found["results"]
    if as_json:
        app.print_json(
            {
                "scope": {
                    "kind": scope.kind,
                    "id": scope.id,
                    "conversations": len(scope.conversation_ids),
                },
                "between": list(sources),
                "by": by,
                "duplicates": found["duplicates"],
                "measures": {
                    measure: [{"group": g, **a.as_dict()} for g, a in groups.items()]
                    for measure, groups in results.items()
                },
            }
        )
        return
    console = app.console
    for measure, groups in results.items():
        title = f"{sources[0]} vs {sources[1]}: {MEASURE_TITLES[measure]} ({scope.kind} {scope.id})"
        console.print(summary_table(title, groups, by))
        for group, result in groups.items():
            print_matrix(console, group, result, sources)
    repeated = {s: n for s, n in found["duplicates"].items() if n}
    for source, extra in repeated.items():
        console.print(
            f"{source}: {extra} older score(s) by other users left aside (the latest counts).",
            markup=False,
        )


def summary_table(title: str, groups: dict[str, Agreement], by: str | None) -> Table:
    table = Table(title=Text(title, overflow="fold"))
    table.add_column(by or "group", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("agreement", justify="right")
    table.add_column("kappa", justify="right")
    table.add_column("left out", justify="right")
    for group, result in groups.items():
        table.add_row(
            Text(visible(group)),
            str(result.n),
            _share(result.observed),
            "–" if result.kappa is None else f"{result.kappa:.3f}",
            str(result.left_out),
        )
    return table


def print_matrix(console: Console, group: str, result: Agreement, sources: tuple[str, str]) -> None:
    """Rows: the first source's labels; columns: the second's."""
    if not result.labels:
        return
    heading = f"{visible(group)}: rows {sources[0]}, columns {sources[1]}"
    console.print(Text(heading, style="bold", overflow="fold"))
    table = Table(show_header=True)
    table.add_column("", overflow="fold")
    for label in result.labels:
        table.add_column(label, justify="right", overflow="fold")
    for label, row in zip(result.labels, result.matrix, strict=True):
        table.add_row(label, *(str(v) for v in row))
    console.print(table)


def _share(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
