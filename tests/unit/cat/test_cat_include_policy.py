"""Model files from strangers are safe to load: `include` reads only inside the allowed
directories, says nothing about what lies outside them, and limits what it reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import MP, write

from pisa_mm.cat.loader import CAT_DIR, COMPAT_DIR, MAX_INCLUDE_BYTES, load_model
from pisa_mm.cli import main
from pisa_mm.errors import PisaMMError

SECRET = "let leaked = po (* secret-content *)\n"


def error_of(path: Path, search_path: tuple[Path, ...] = ()) -> PisaMMError:
    with pytest.raises(PisaMMError) as info:
        load_model(str(path), search_path=search_path)
    return info.value


def rendered(exc: PisaMMError) -> str:
    return exc.render(getattr(exc, "sources", None))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the model's directory, that no include may read."""
    secret = tmp_path / "outside" / "secret.cat"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    (tmp_path / "model").mkdir()
    return secret


def _model(tmp_path: Path, include: str) -> Path:
    path = tmp_path / "model" / "m.cat"
    path.write_text(f'"m"\ninclude "{include}"\nacyclic po as a\n')
    return path


def test_includes_inside_the_model_tree_work(tmp_path: Path) -> None:
    (tmp_path / "model" / "sub").mkdir(parents=True)
    (tmp_path / "model" / "sub" / "a.cat").write_text('include "b.cat"\nlet a = po')
    (tmp_path / "model" / "sub" / "b.cat").write_text("let b = rf")
    # `..` that stays inside the model's tree is fine
    (tmp_path / "model" / "sub" / "c.cat").write_text('include "../d.cat"')
    (tmp_path / "model" / "d.cat").write_text("let d = co")
    path = tmp_path / "model" / "m.cat"
    path.write_text('"m"\ninclude "sub/a.cat"\ninclude "sub/c.cat"\nacyclic a | b | d as x\n')
    assert load_model(str(path)).check("x")


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "home"])
def test_escapes_are_refused_alike_whether_or_not_the_target_exists(
    tmp_path: Path, outside: Path, how: str
) -> None:
    messages = []
    for target in (outside, outside.with_name("missing.cat")):
        match how:
            case "absolute":
                include = str(target)
            case "dotdot":
                include = f"../outside/{target.name}"
            case "home":
                include = "~/secret.cat"
            case _:
                link = tmp_path / "model" / f"link-{target.name}"
                link.unlink(missing_ok=True)
                os.symlink(target, link)
                include = link.name
        exc = error_of(_model(tmp_path, include))
        text = rendered(exc)
        assert "[cat-include]" in text
        assert "secret-content" not in text and "leaked" not in text
        assert all(str(outside.parent) not in s for s in getattr(exc, "sources", {}))
        messages.append(text.splitlines()[0].replace("missing.cat", "secret.cat"))
    assert messages[0] == messages[1]


def test_a_symlinked_directory_leading_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    os.symlink(outside.parent, tmp_path / "model" / "lib")
    assert "leads outside" in rendered(error_of(_model(tmp_path, "lib/secret.cat")))


def test_model_path_directories_are_allowed(tmp_path: Path, outside: Path) -> None:
    path = _model(tmp_path, "secret.cat")
    assert "cannot find included file 'secret.cat'" in rendered(error_of(path))
    m = load_model(str(path), search_path=(outside.parent,))
    assert m.definition("leaked") is not None
    # a file found on the model path may include only within that directory
    outside.write_text('include "../model/m.cat"')
    assert "leads outside" in rendered(error_of(path, (outside.parent,)))


def test_herd_library_names_are_ours(tmp_path: Path) -> None:
    # herd's own cos.cat and stdlib.cat, next to the model, are never read
    for name in ("cos.cat", "stdlib.cat"):
        (tmp_path / "model").mkdir(exist_ok=True)
        (tmp_path / "model" / name).write_text("with co from generate_cos(co0)\n")
    path = tmp_path / "model" / "m.cat"
    path.write_text('C m\ninclude "cos.cat"\ninclude "stdlib.cat"\nacyclic po | ca | eco as a\n')
    assert load_model(str(path)).check("a")


def test_included_files_are_size_limited(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    big = tmp_path / "model" / "big.cat"
    big.write_text("(*" + " " * MAX_INCLUDE_BYTES + "*)")
    text = rendered(error_of(_model(tmp_path, "big.cat")))
    assert f"larger than {MAX_INCLUDE_BYTES} bytes [cat-include]" in text


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_special_files_are_not_read_and_said_to_be_no_regular_file(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "model").mkdir()
    special = tmp_path / "model" / "special.cat"
    os.mkfifo(special) if kind == "fifo" else special.mkdir()
    text = rendered(error_of(_model(tmp_path, "special.cat")))
    assert "included 'special.cat' is not a regular file" in text
    assert "[cat-include]" in text


def test_a_special_file_outside_is_refused_as_outside(tmp_path: Path, outside: Path) -> None:
    os.mkfifo(outside.parent / "fifo.cat")
    assert "leads outside" in rendered(error_of(_model(tmp_path, "../outside/fifo.cat")))


def test_diagnostics_quote_only_accepted_files(tmp_path: Path, outside: Path) -> None:
    exc = error_of(_model(tmp_path, "../outside/secret.cat"))
    shipped = {str(CAT_DIR / "stdlib.cat"), str(COMPAT_DIR / "prelude.cat")}
    assert set(getattr(exc, "sources", {})) == {str(tmp_path / "model" / "m.cat"), *shipped}


def test_model_path_on_the_command_line(
    tmp_path: Path, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = next(iter(sorted(Path(__file__).resolve().parents[3].glob("litmus/pisa/mp/*.litmus"))))
    path = _model(tmp_path, "secret.cat")
    assert main(["run", "--engine", "explicit", "--model", str(path), str(test)]) == 2
    assert "cannot find included file 'secret.cat' [cat-include]" in capsys.readouterr().err
    argv = ["run", "--engine", "explicit", "--model", str(path), "--model-path"]
    assert main([*argv, str(outside.parent), str(test)]) == 0
    assert "1 tests, 0 ok, 0 failed, 1 without expectation" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "query", "diff", "promote", "crossval"])
def test_every_command_that_loads_a_model_takes_model_path(
    tmp_path: Path, outside: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    test = str(write(tmp_path / "tests", "MP.litmus", MP))
    model = str(_model(tmp_path, "secret.cat"))
    argv = {
        "run": ["run", "--model", model, test],
        "query": ["query", test, "--outcome", "P1:%r0 == 1", "--model", model],
        "diff": ["diff", model, "pisa", test],
        "promote": ["promote", test, "--model", model],
        "crossval": ["crossval", test, "--model", model],
    }[command]
    assert main(argv) == 2
    assert "cannot find included file 'secret.cat' [cat-include]" in capsys.readouterr().err
    code = main([*argv, "--model-path", str(outside.parent)])
    err = capsys.readouterr().err
    assert code in (0, 1) and "[cat-include]" not in err, err
