"""How far the reference tier moved: each long run re-made with its provenance, set beside the
committed file it replaces, number by number, with tests/rerun_tolerance.py's kinds and
statistics. Where a lesson's parts have since moved to studies, the re-made files of the lesson
and of those studies together replace its old file, and each number is set beside the number at
the same key there (lesson 06's old `--full` file held what 06a's and 06g's `--full` runs now
write).

    python tests/reference_tier.py          # writes runs/results/reference_tier.json
    python tests/reference_tier.py --out .  # into results/ (to commit)

A replaced file whose re-made files are not all in results/ is left out, and the printout says so.
"""
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import harness
import plumbing  # noqa: E402
import rerun_tolerance  # noqa: E402
from harness import Setting  # noqa: E402

# The committed file (as it was at --against): the re-made files that now hold its numbers.
REPLACED = {
    "06_allocation_full.json": ["06_allocation_full.json", "06a_text_allocation_full.json",
                                "06g_fixed_budget_full.json"],
    "07a_text_retrieval_full.json": ["07a_text_retrieval_full.json"],
    "07_real_data_full.json": ["07c_fixed_width_full.json"],      # both sweeps, as the old file
    "06_allocation_fixed_heads1-2-4-8-16_fixed_steps1000.json": [   # its part a, at 1,000 steps
        "06g_fixed_budget_fixed_heads1-2-4-8-16_fixed_steps1000.json"],
    "06b_ngram_full.json": ["06b_ngram_full.json"],
    "02a_recipe_study.json": ["02a_recipe_study.json"],
    "02b_directions_study.json": ["02b_directions_study.json"],
    "02c_seed_count.json": ["02c_seed_count.json"],
    "02_multihead_model_T8-16-32_lr0.003_batch_size256_full.json": [   # the grid at T = 8 ... 32
        "02_multihead_model_T8-16-32_lr0.003_batch_size256_full.json"],
    "02e_training_budget_T32_heads_below2_budgets20000-50000_parts_budget.json": [   # 02e, T = 32
        "02e_training_budget_T32_heads_below2_budgets20000-50000_parts_budget.json"],
    "02e_training_budget_parts_budget.json": ["02e_training_budget_parts_budget.json"],  # T = 8
    "05_saturation_full.json": ["05_saturation_full.json", "05a_confound_full.json",
                                "05b_low_rank_full.json", "05c_bounded_logits_full.json"],
    "06a_06b_06c_replayed.json": [      # lesson 06's default when it held 06a's, 06b's and 06c's parts
        "06a_text_allocation.json", "06b_ngram.json", "06c_trained_saturation.json",
        "06e_allocation_rules.json", "06g_fixed_budget_fixed_heads1-2-4-8-16.json",
        "06_allocation_steps1000.json"],
}

SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "against": Setting("82f575b", ..., ..., str,
                       "the commit that holds the files the reference tier replaces"),
}


def merged(written):
    """The numbers of several results files ({name: its numbers}) as one: their keys side by
    side, each file's own record of itself (rerun_tolerance.NOT_NUMBERS) left out. A key two
    files share with a dict in each (lesson 05's and 05a's `model_side`) holds both dicts' keys."""
    together = {}
    for numbers in written.values():
        for key, value in numbers.items():
            if key in rerun_tolerance.NOT_NUMBERS:
                continue
            if isinstance(value, dict) and isinstance(together.get(key), dict):
                value = {**together[key], **value}
            together[key] = value
    return together


def by_part(old, new):
    """The changes by kind within each top-level key the two sides share (a lesson's part, or a
    study's that its old file held): {key: {kind: summary}}."""
    return {key: {sort: rerun_tolerance.summary(values) for sort, values in
                  rerun_tolerance.compare({key: old[key]}, {key: new[key]})[0].items()}
            for key in old.keys() & new.keys() if key not in rerun_tolerance.NOT_NUMBERS}


def main(argv=None):
    args = harness.config(SETTINGS, argv, __doc__.split("\n")[0])
    run = plumbing.Run("reference_tier", args, named=("against",), script=Path(__file__))
    files, pooled = {}, {}
    for old_name, new_names in REPLACED.items():
        contents = {name: (ROOT / "results" / name).read_bytes() for name in new_names
                    if (ROOT / "results" / name).is_file()}
        written = {name: json.loads(content) for name, content in contents.items()}
        missing = [name for name in new_names if name not in written]
        if missing or not any(numbers.get("provenance") for numbers in written.values()):
            print(f"{old_name}: left out ({', '.join(missing) or 'not re-made'} not in results/)")
            continue
        old_bytes = rerun_tolerance.committed_version(old_name, args.against)
        old, new = json.loads(old_bytes), merged(written)
        changes, flipped = rerun_tolerance.compare(old, new)
        summaries = {sort: rerun_tolerance.summary(values) for sort, values in changes.items()}
        for sort, values in changes.items():
            pooled.setdefault(sort, []).extend(values)
            rerun_tolerance.shown(old_name, sort, summaries[sort])
        files[old_name] = {"committed": {**rerun_tolerance.environment(old),
                                         "sha256": hashlib.sha256(old_bytes).hexdigest()},
                           "remade": {name: {**rerun_tolerance.environment(numbers),
                                             "sha256": hashlib.sha256(contents[name]).hexdigest()}
                                      for name, numbers in written.items()},
                           "changes": summaries, "flipped": flipped,
                           "by_part": by_part(old, new)}
    by_kind = {sort: rerun_tolerance.summary(values) for sort, values in pooled.items()}
    for sort, found in by_kind.items():
        rerun_tolerance.shown("the reference tier, pooled", sort, found)
    run.record({"against": args.against, "by_kind": by_kind, "files": files})
    return run.finish()


if __name__ == "__main__":
    main()
