"""The project's packages import their modules without a cycle, and qs3orao nothing of the study or the baselines."""

import ast
import graphlib
from pathlib import Path

import pytest

import baselines
import qs3orao
import qs3study

# Top-level packages qs3orao must not import: the study code, the baselines and what only they need.
FORBIDDEN = ("qs3study", "baselines", "pandas", "pooch", "skordinal", "matplotlib")


def module_files(root, package):
    """``{module name: path}`` of every ``.py`` file under ``root``, the package ``package``."""
    files = {}
    for path in sorted(Path(root).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join((package, *parts))] = path
    return files


def imports(name, path):
    """``(module, member)`` per name ``path`` (module ``name``) imports, at top level or inside functions.

    ``module`` is absolute; ``member`` is the name taken from it by ``from module import member``, else None.
    """
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                parts = name.split(".")
                module = ".".join([*parts[:len(parts) - node.level + is_package], *([module] if module else [])])
            yield from ((module, alias.name) for alias in node.names)


def import_graph(files):
    """``{module: the modules of files it imports}``; ``from a import b`` imports module ``a.b`` if there is one."""
    graph = {}
    for name, path in files.items():
        targets = {f"{module}.{member}" if f"{module}.{member}" in files else module
                   for module, member in imports(name, path)}
        graph[name] = (targets & files.keys()) - {name}
    return graph


def find_cycle(graph):
    """A list of modules that import each other in a circle, or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return error.args[1]
    return None


def qs3orao_files():
    return module_files(Path(qs3orao.__file__).parent, "qs3orao")


@pytest.mark.parametrize("package", [qs3orao, baselines, qs3study], ids=lambda package: package.__name__)
def test_modules_import_each_other_without_a_cycle(package):
    files = module_files(Path(package.__file__).parent, package.__name__)
    assert len(files) > 5
    assert find_cycle(import_graph(files)) is None


def test_qs3orao_holds_the_method_alone():
    assert "qs3orao.engine.single" in qs3orao_files() and "qs3orao.trig" in qs3orao_files()
    assert not (Path(qs3orao.__file__).parent / "datasets").exists()
    assert not (Path(qs3orao.__file__).parent / "theory").exists()


@pytest.mark.parametrize("name", FORBIDDEN)
def test_qs3orao_imports_nothing_of_the_study_or_the_baselines(name):
    importers = sorted(module for module, path in qs3orao_files().items()
                       if any(imported.split(".")[0] == name for imported, _ in imports(module, path)))
    assert importers == []


def test_the_scan_finds_a_cycle_through_an_import_inside_a_function(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "__init__.py").write_text("from .a import f\n")
    (tmp_path / "a.py").write_text("def f():\n    from .sub import b\n    return b\n")
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "sub" / "b.py").write_text("from .. import a\n")
    graph = import_graph(module_files(tmp_path, "pkg"))
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.sub.b"}, "pkg.sub": set(), "pkg.sub.b": {"pkg.a"}}
    assert sorted(set(find_cycle(graph))) == ["pkg.a", "pkg.sub.b"]
