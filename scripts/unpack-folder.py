"""Unpack one folder of a wheel or source archive: unpack-folder.py ARCHIVE FOLDER DEST.

Writes ARCHIVE's files lying directly in FOLDER (a path inside the package; the top folder
NAME-VERSION/ of a .tar.gz source archive is skipped, a wheel or zip is read as it is) to
DEST/FOLDER. Used by install-system-deps.sh for card artwork in PyPI packages, so that
nothing else of the package is installed.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath


def members(archive: Path) -> list[tuple[PurePosixPath, bytes]]:
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            return [(PurePosixPath(i.filename), z.read(i)) for i in z.infolist()
                    if not i.is_dir()]
    with tarfile.open(archive) as t:
        out = []
        for i in t.getmembers():
            data = t.extractfile(i) if i.isfile() else None
            if data is not None:
                out.append((PurePosixPath(*PurePosixPath(i.name).parts[1:]), data.read()))
        return out


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: unpack-folder.py ARCHIVE FOLDER DEST", file=sys.stderr)
        return 2
    archive, folder, dest = Path(sys.argv[1]), PurePosixPath(sys.argv[2]), Path(sys.argv[3])
    if not archive.is_file():
        print(f"no such archive: {archive}", file=sys.stderr)
        return 2
    written = 0
    for path, data in members(archive):
        if path.parent == folder and ".." not in path.parts:
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += 1
    if written == 0:
        print(f"{archive.name}: nothing under {folder}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
