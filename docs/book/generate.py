"""Makes the book's figures and tables from out/, as the chapters reference them.

    python3 docs/book/generate.py [--check] [--retrysim PATH]

A chapter names what it shows under generated/ (docs/book/src/generated/), and this script makes
exactly those files, never anything typed by hand:

- generated/<name>/<chart>.svg        out/<name>/charts/<chart>.svg
- generated/<name>/table.txt          the table `retrysim run` prints for the shipped config named
                                      <name>, from a run whose summary.csv must equal
                                      out/<name>/summary.csv (so the table is out/'s)
- generated/<name>.explore/table.txt  the table `retrysim explore` prints, the same way, its
                                      explore.csv held to out/<name>.explore/explore.csv
- generated/<a>/vs-<b>.md             `retrysim compare out/<a> out/<b> --export-markdown`
- generated/<name>/<path>             any other file of out/<name>/ (in-words.md, a counterexample,
                                      …); a Markdown file's headings moved two levels down, so
                                      it sits inside the chapter that includes it

A Markdown file that cannot include (README.md, CONTRIBUTING.md) or a chapter that shows a
command's own output pastes it under a marker, and the script keeps the paste true:

    <!-- pasted: retrysim run configs/lost-reply.toml -->
    ```text
    $ retrysim run configs/lost-reply.toml
    …what it prints: stderr (progress, errors), then stdout…
    ```

The command runs in a scratch folder holding configs/ and docs/ (linked) and a copy of out/, in
the order the pastes come (README.md, CONTRIBUTING.md, then the chapters), so a later command sees
what an earlier one wrote; `cargo run --release [-- ARGS]` runs the built binary with ARGS. A
marker ending `(exit N)` expects that exit code, any other expects 0.

Files under generated/ that no chapter names any longer are removed. With --check nothing is
written: it fails, naming each file, if what is committed differs from what out/ makes now (a
stale figure or table), as `.ci/run` does.

It also fails if a shipped experiment is used by no chapter and no notebook: each must be named
by its config file (configs/<file>.toml) or its output folder (out/<name>/).
"""

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "docs" / "book" / "src"
GENERATED = SRC / "generated"
OUT = ROOT / "out"
REFERENCE = re.compile(r"generated/([A-Za-z0-9._/+-]+)")


def chapters():
    return sorted(p for p in SRC.rglob("*.md") if GENERATED not in p.parents and "notebooks" not in p.parts)


def references():
    """Every generated/ path the chapters name, with the chapters that name it."""
    found = {}
    for chapter in chapters():
        for ref in REFERENCE.findall(chapter.read_text(encoding="utf-8")):
            found.setdefault(ref.rstrip("."), []).append(chapter.name)
    return found


def shipped_configs():
    """Each shipped config by the experiment name it writes out/<name>/ under."""
    configs = {}
    for path in sorted((ROOT / "configs").glob("*.toml")) + sorted((ROOT / "configs" / "scenarios").glob("*.toml")):
        match = re.search(r'^name = "([^"]+)"', path.read_text(encoding="utf-8"), re.M)
        if match:
            configs[match.group(1)] = path
    return configs


class Maker:
    def __init__(self, retrysim, scratch):
        self.retrysim = retrysim
        self.scratch = Path(scratch)
        self.configs = shipped_configs()

    def make(self, ref):
        """The bytes of generated/<ref>, or an error message."""
        name, _, rest = ref.partition("/")
        if not rest:
            return None, f"generated/{ref} names no file"
        if rest == "table.txt":
            return self.table(name)
        if rest.startswith("vs-") and rest.endswith(".md"):
            return self.compare(name, rest[3:-3])
        for candidate in (OUT / name / "charts" / rest, OUT / name / rest):
            if candidate.is_file():
                data = candidate.read_bytes()
                return (demoted(data) if candidate.suffix == ".md" else data), None
        return None, f"generated/{ref}: nothing in out/{name}/ makes it (no charts/{rest} and no {rest})"

    def table(self, name):
        explored = name.endswith(".explore")
        experiment = name[: -len(".explore")] if explored else name
        config = self.configs.get(experiment)
        if config is None:
            return None, f"generated/{name}/table.txt: no shipped config is named {experiment}"
        command, held = ("explore", "explore.csv") if explored else ("run", "summary.csv")
        shown = f"retrysim {command} {config.relative_to(ROOT)}"
        run = subprocess.run(
            [self.retrysim, command, str(config), "--out", str(self.scratch)]
            + ([] if explored else ["--progress", "none"]),
            capture_output=True, text=True, cwd=ROOT)
        if run.returncode != 0:
            return None, f"{shown} failed: {run.stderr.strip()}"
        if (self.scratch / name / held).read_bytes() != (OUT / name / held).read_bytes():
            return None, f"out/{name}/{held} is not what {shown} makes now: rerun it before the book"
        # The table, without the line saying where the run was written.
        text = re.sub(r"\n+wrote [^\n]*\n?$", "\n", run.stdout)
        return text.encode(), None

    def compare(self, a, b):
        target = self.scratch / f"{a}-vs-{b}.md"
        run = subprocess.run(
            [self.retrysim, "compare", f"out/{a}", f"out/{b}", "--quiet", "--export-markdown", str(target)],
            capture_output=True, text=True, cwd=ROOT)
        if run.returncode not in (0, 1):
            return None, f"retrysim compare out/{a} out/{b} failed: {run.stderr.strip()}"
        return target.read_bytes(), None


def demoted(data):
    """A Markdown file's headings two levels down (# becomes ###), outside code blocks."""
    lines, fenced = [], False
    for line in data.decode("utf-8").split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,4} ", line):
            line = "##" + line
        lines.append(line)
    return "\n".join(lines).encode("utf-8")


PASTED = re.compile(r"^<!-- pasted: (.+?)(?: \(exit (\d+)\))? -->$")


def pasting_files():
    """The files with pasted outputs, in the order their commands run."""
    return [p for p in (ROOT / "README.md", ROOT / "CONTRIBUTING.md") if p.is_file()] + chapters()


def run_pasted(retrysim, scratch, command, code):
    """What `command` prints, as its paste shows it, or an error."""
    words = shlex.split(command)
    if words[:3] == ["cargo", "run", "--release"]:
        args = words[4:] if words[3:4] == ["--"] else words[3:]
    elif words[:1] == ["retrysim"]:
        args = words[1:]
    else:
        return None, f"`{command}` is neither `retrysim …` nor `cargo run --release …`"
    run = subprocess.run([retrysim] + args, capture_output=True, text=True, cwd=scratch)
    if run.returncode != code:
        return None, f"`{command}` exited {run.returncode}, not {code}: {run.stderr.strip()}"
    return f"$ {command}\n{run.stderr}{run.stdout}".rstrip("\n") + "\n", None


def pasted(retrysim, problems):
    """Each file with pastes, as its pastes make it now: {path: text}."""
    made = {}
    with tempfile.TemporaryDirectory(prefix="retrysim-pasted-") as scratch:
        for name in ("configs", "docs"):
            (Path(scratch) / name).symlink_to(ROOT / name)
        shutil.copytree(OUT, Path(scratch) / "out")
        for path in pasting_files():
            lines = path.read_text(encoding="utf-8").split("\n")
            out, i, marked = [], 0, False
            while i < len(lines):
                out.append(lines[i])
                marker = PASTED.match(lines[i])
                i += 1
                if not marker:
                    continue
                marked = True
                where = f"{path.relative_to(ROOT)}:{i}"
                if i >= len(lines) or not lines[i].startswith("```"):
                    problems.append(f"{where}: a pasted marker must stand right above a fenced block")
                    continue
                end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
                if end is None:
                    problems.append(f"{where}: the pasted block has no closing fence")
                    continue
                text, error = run_pasted(retrysim, scratch, marker.group(1), int(marker.group(2) or 0))
                if error:
                    problems.append(f"{where}: {error}")
                    text = "\n".join(lines[i + 1:end]) + "\n"
                out.append(lines[i])
                out.extend(text.rstrip("\n").split("\n"))
                i = end
            if marked:
                made[path] = "\n".join(out)
    return made


def uncovered():
    """Shipped experiments no chapter and no notebook names."""
    text = "".join(p.read_text(encoding="utf-8") for p in chapters())
    text += "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "notebooks").glob("*.ipynb")))
    missing = []
    for name, config in shipped_configs().items():
        path = config.relative_to(ROOT).as_posix()
        if path not in text and f"out/{name}/" not in text and f"out/{name}`" not in text:
            missing.append(f"{path} (out/{name}/)")
    return missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if anything is stale")
    parser.add_argument("--retrysim", default=str(ROOT / "target" / "release" / "retrysim"),
                        help="the binary to run (default: target/release/retrysim)")
    args = parser.parse_args()
    problems = [f"used by no chapter or notebook: {m}" for m in uncovered()]
    wanted, failed = {}, set()
    with tempfile.TemporaryDirectory(prefix="retrysim-book-") as scratch:
        maker = Maker(args.retrysim, scratch)
        for ref, named_by in sorted(references().items()):
            data, error = maker.make(ref)
            if error:
                problems.append(f"{', '.join(sorted(set(named_by)))}: {error}")
                failed.add(GENERATED / ref)
            else:
                wanted[GENERATED / ref] = data
    pastes = pasted(args.retrysim, problems)
    repasted = sorted(p for p, text in pastes.items() if p.read_text(encoding="utf-8") != text)
    present = {p for p in GENERATED.rglob("*") if p.is_file()} if GENERATED.exists() else set()
    stale = sorted(p for p in wanted if not p.is_file() or p.read_bytes() != wanted[p])
    # A file whose making failed is named by a chapter: the failure is the problem, not it.
    extra = sorted(present - set(wanted) - failed)
    if args.check:
        problems += [f"stale: {p.relative_to(ROOT)} differs from what out/ makes" for p in stale]
        problems += [f"stale: {p.relative_to(ROOT)} is named by no chapter" for p in extra]
        problems += [f"stale: {p.relative_to(ROOT)} pastes an output that differs from what its command prints now"
                     for p in repasted]
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        if args.check and (stale or extra or repasted):
            print("the book's generated files are stale: run python3 docs/book/generate.py", file=sys.stderr)
        return 1
    if not args.check:
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(path.name + ".part")
            part.write_bytes(wanted[path])
            part.replace(path)
        for path in extra:
            path.unlink()
        for path in repasted:
            part = path.with_name(path.name + ".part")
            part.write_text(pastes[path], encoding="utf-8")
            part.replace(path)
        for folder in sorted((p for p in GENERATED.rglob("*") if p.is_dir()), reverse=True):
            if not any(folder.iterdir()):
                folder.rmdir()
    print(f"{len(wanted)} generated files, {len(stale)} {'stale' if args.check else 'rewritten'}, "
          f"{len(extra)} {'unnamed' if args.check else 'removed'}; {len(pastes)} files with pastes, "
          f"{len(repasted)} {'stale' if args.check else 'repasted'}; every shipped experiment is used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
