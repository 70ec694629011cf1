"""Rebuild src/mcp_multi_gmail/data/windows_zones.json from CLDR's windowsZones.xml.

    uv run python scripts/windows_zones.py path/to/common/supplemental/windowsZones.xml

Keeps the territory-001 row of each Windows zone (the zone Windows itself means by the name).
Source and licence: NOTICE.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "mcp_multi_gmail" / "data" / "windows_zones.json"


def main(source: str) -> None:
    table: dict[str, str] = {}
    for row in ElementTree.parse(source).getroot().iter("mapZone"):
        if row.get("territory") == "001":
            table[row.get("other", "")] = row.get("type", "").split()[0]
    TARGET.write_text(json.dumps(dict(sorted(table.items())), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(table)} Windows zones -> {TARGET}")


if __name__ == "__main__":
    main(sys.argv[1])
