# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd's saved state as its next start would read it: state.json with
state.journal applied (bwgovd(8), FILES)."""
import json
import os


def saved_units(state_dir):
    """The units of state.json with the journal's lines of the file's
    generation applied in order; a last line without its newline (cut short
    by a crash) is ignored."""
    with open(os.path.join(state_dir, "state.json")) as f:
        doc = json.load(f)
    units, gen = doc.get("units", {}), doc.get("generation", 0)
    try:
        with open(os.path.join(state_dir, "state.journal")) as f:
            text = f.read()
    except FileNotFoundError:
        return units
    for line in text.split("\n")[:-1]:
        entry = json.loads(line)
        if entry.get("generation") != gen:
            continue
        for name in entry.get("forget", []):
            units.pop(name, None)
        units.update(entry.get("units", {}))
    return units
