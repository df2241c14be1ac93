"""A campaign directory into the results database (``campaign_*`` tables), through
the schema: the store copies rows, it does not need to know the CSV files."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from grader.measure import schema


class CampaignStore(Protocol):
    def save_campaign(self, campaign_id: str, meta: Mapping[str, object],
                      tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[object]]]]
                      ) -> int: ...


def save(out: Path, store: CampaignStore,
         files: Mapping[str, tuple[str, tuple[str, ...]]] = schema.FILES,
         meta_name: str = schema.META) -> int:
    """Store the campaign (or experiment: its ``files`` and ``meta_name``) in ``out``;
    re-saving replaces it. Returns the rows stored."""
    meta = json.loads((out / meta_name).read_text())
    tables: dict[str, tuple[Sequence[str], Sequence[Sequence[object]]]] = {}
    for fname, (table, cols) in files.items():
        path = out / fname
        if not path.exists() or not path.stat().st_size:
            continue
        with path.open(newline="") as f:
            rows = [[r.get(c) if r.get(c) not in ("", None) else None for c in cols]
                    for r in csv.DictReader(f)]
        tables[table] = ([c.lower() for c in cols], rows)
    return store.save_campaign(meta["id"], meta, tables)
