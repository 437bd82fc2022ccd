"""A PEP 517 build backend whose build code tries every reach of ``reaches.py`` while the server builds an
app's environment, then builds a real wheel holding what it found (``hostile_build/results.json``)."""

import base64
import hashlib
import json
import os
import zipfile

import reaches

NAME, VERSION = "hostile_build", "1.0"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("targets.json") as handle:
        targets = json.load(handle)
    files = {
        f"{NAME}/__init__.py": f"VERSION = {VERSION!r}\n",
        f"{NAME}/results.json": json.dumps(reaches.attempt_all(targets)),
        f"{NAME}-{VERSION}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: hostile-build\nVersion: {VERSION}\n",
        f"{NAME}-{VERSION}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: backend\nRoot-Is-Purelib: true\n"
                                             "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{NAME}-{VERSION}.dist-info/RECORD,,")
    files[f"{NAME}-{VERSION}.dist-info/RECORD"] = "\n".join(record) + "\n"
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return name
