"""Prepare the training corpus of bench/train (docs/training.md).

The text is the Linux kernel's documentation as Debian ships it
(`linux-doc-6.1`, reStructuredText and plain text under
/usr/share/doc/linux-doc-6.1/Documentation), one document per file, without
the device-tree bindings (YAML) and the translations. A byte-level BPE
tokenizer (PyPI `tokenizers`) is trained on the training split only. Output,
under --out:

  tokenizer.json           the tokenizer
  train.bin, val.bin       token ids, uint16, documents back to back
  train_docs.npy, val_docs.npy   int64 document boundaries (cu_seqlens form)
  meta.json                source package and sha256, sizes, split rule

Everything is deterministic: files are read in sorted order, the split is a
hash of the file's path, and the tokenizer's training is single-threaded.

  python bench/train/prepare_data.py --out data/train            # downloads
  python bench/train/prepare_data.py --deb linux-doc-6.1_*.deb --out ...
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

PACKAGE = "linux-doc-6.1"
DOC_ROOT = "usr/share/doc/linux-doc-6.1/Documentation"
SKIP_DIRS = ("devicetree/", "translations/")
VOCAB = 8192
VAL_PERCENT = 5


def sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_deb(work: pathlib.Path) -> pathlib.Path:
    subprocess.run(["apt-get", "download", PACKAGE], cwd=work, check=True)
    debs = sorted(work.glob(f"{PACKAGE}_*.deb"))
    if not debs:
        sys.exit(f"prepare_data: apt-get download {PACKAGE} wrote no .deb")
    return debs[-1]


def read_documents(deb: pathlib.Path, work: pathlib.Path):
    """(relative path, text) of every .rst/.txt document, sorted by path."""
    subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "x")], check=True)
    root = work / "x" / DOC_ROOT
    if not root.is_dir():
        sys.exit(f"prepare_data: {deb.name} has no {DOC_ROOT}")
    docs = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(SKIP_DIRS) or not path.is_file():
            continue
        name = rel[:-3] if rel.endswith(".gz") else rel
        if not name.endswith((".rst", ".txt")):
            continue
        raw = gzip.decompress(path.read_bytes()) if rel.endswith(".gz") \
            else path.read_bytes()
        text = raw.decode("utf-8", errors="replace").strip()
        if text:
            docs.append((name, text))
    return docs


def is_validation(name: str) -> bool:
    digest = hashlib.sha256(name.encode()).digest()
    return int.from_bytes(digest[:4], "little") % 100 < VAL_PERCENT


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--deb", type=pathlib.Path,
                    help=f"a downloaded {PACKAGE} .deb (default: apt-get "
                    "download)")
    args = ap.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # deterministic merges
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        deb = args.deb.resolve() if args.deb else fetch_deb(work)
        docs = read_documents(deb, work)
        deb_name, deb_sha = deb.name, sha256(deb)
    train = [t for n, t in docs if not is_validation(n)]
    val = [t for n, t in docs if is_validation(n)]

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|doc|>"])
    tok.train_from_iterator(train, trainer=trainer)
    tok.save(str(args.out / "tokenizer.json"))
    bos = tok.token_to_id("<|doc|>")

    meta = {"source": f"Debian package {deb_name}", "sha256": deb_sha,
            "documents": f"{DOC_ROOT}/**/*.rst|*.txt (gzip), without "
                         f"{', '.join(SKIP_DIRS)}",
            "split": f"sha256(path) % 100 < {VAL_PERCENT} is validation",
            "vocab": tok.get_vocab_size(), "bos": bos}
    for split, texts in (("train", train), ("val", val)):
        ids, bounds = [], [0]
        for enc in tok.encode_batch(texts):
            ids.append(bos)  # each document starts with <|doc|>
            ids.extend(enc.ids)
            bounds.append(len(ids))
        arr = np.asarray(ids, dtype=np.uint16)
        arr.tofile(args.out / f"{split}.bin")
        np.save(args.out / f"{split}_docs.npy", np.asarray(bounds, np.int64))
        lens = np.diff(bounds)
        meta[split] = {"documents": len(texts), "tokens": int(arr.size),
                       "chars": sum(map(len, texts)),
                       "doc_tokens_median": int(np.median(lens)),
                       "doc_tokens_max": int(lens.max()),
                       "sha256": hashlib.sha256(arr.tobytes()).hexdigest()}
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
