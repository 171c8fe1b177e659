"""Plot the training study's loss curves (docs/training.md) from the logs
train.py wrote: train loss (a 10-point moving mean of the logged steps) and
held-out loss per variant.

  python bench/train/plot.py bench/results/h200-run28-train docs/training.png
"""
from __future__ import annotations

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ("bf16", "flamia", "leaky", "leaky-fp4")


def read(path: pathlib.Path):
    train, val, impl = [], [], None
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "train":
            train.append((r["step"], r["loss"]))
        elif r["kind"] == "eval":
            val.append((r["step"], r["val_loss"]))
        elif r["kind"] == "config":
            impl = r["implementation"]
    return train, val, impl


def main() -> None:
    logs, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for name in ORDER:
        path = logs / f"{name}.jsonl"
        if not path.exists():
            continue
        train, val, impl = read(path)
        steps = [s for s, _ in train]
        loss = [x for _, x in train]
        smooth = [sum(loss[max(0, i - 9):i + 1]) / len(loss[max(0, i - 9):i + 1])
                  for i in range(len(loss))]
        a.plot(steps, smooth, label=f"{name} ({impl})")
        b.plot([s for s, _ in val], [x for _, x in val], marker="o",
               label=name)
    a.set(xlabel="step (16k tokens)", ylabel="train loss (nats, 10-log mean)",
          ylim=(4.6, 7.5), title="train")
    b.set(xlabel="step (16k tokens)", ylabel="held-out loss (nats)",
          ylim=(4.7, 6.6), title="held-out")
    a.legend(fontsize=7)
    b.legend(fontsize=8)
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
