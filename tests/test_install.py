# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Installing roceval: make install, the Debian package, the container image's recipe.

The installed copies are run from where they were installed: what a user gets
must be the program the tests judge, and its unit must start it from there.
"""
import gzip
import json
import os
import re
import shutil
import stat
import subprocess

import pytest

from conftest import ROCEVAL, ROOT, pin_dir, run

# make writes the tree's build directory (make deb its .output/deb): one make at a time
# (the group takes minutes: started early)
pytestmark = [pytest.mark.xdist_group("make"), pytest.mark.long(2)]


def version():
    return re.search(r'#define ROCEVAL_VERSION "(.*)"', (ROOT / "user" / "lib" / "version.h").read_text()).group(1)


def make(*args):
    # -o: install the binary under test as it is, whatever build (ASan...) it came from
    res = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), f"BIN={ROCEVAL}", "-o", str(ROCEVAL),
                          *args],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def assert_runs_like_the_tree(binary, pcap):
    assert subprocess.run([binary, "--version"], capture_output=True, text=True).stdout == \
        f"roceval {version()}\n"
    installed = subprocess.run([binary, "replay", "--json", pcap], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout) == json.loads(run("replay", "--json", pcap, check=True).stdout)


def assert_unit_names_installed_files(unit, root):
    """The unit's first-time steps (create its user, write the configuration from the example)
    name files that were installed, wherever the prefix put them."""
    sysusers = re.search(r"^#\s+systemd-sysusers (/\S+)", unit, re.M)
    example = re.search(r"^#\s+install -D -m 0644 (/\S+) /etc/roceval/roceval\.conf$", unit, re.M)
    assert sysusers and example, "the unit does not say how to create its user and configuration"
    for path in (sysusers.group(1), example.group(1)):
        assert (root / path.lstrip("/")).is_file(), path


def make_var(name):
    """NAME's value as make sees it, with the included makefiles' additions."""
    res = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT),
                          f"--eval=print-var: ; @echo $({name})", "print-var"],
                         capture_output=True, text=True, check=True)
    return res.stdout.split()


def owner(path):
    """The Debian package that installed PATH (known under /lib or /usr/lib: one directory on
    Debian 12)."""
    real = os.path.normpath(path)
    owners = [subprocess.run(["dpkg", "-S", p], capture_output=True, text=True).stdout
              for p in (real, real.removeprefix("/usr"), "/usr" + real)]
    return next(o for o in owners if o).split(":")[0]


def library_package(flag):
    """The package of the file the linker takes for -lNAME: libNAME.so, else libNAME.a, on the
    compiler's search path."""
    for ext in (".so", ".a"):
        path = subprocess.run(["cc", f"-print-file-name=lib{flag[2:]}{ext}"], capture_output=True,
                              text=True, check=True).stdout.strip()
        if os.path.isabs(path):
            return owner(path)
    raise AssertionError(f"the linker finds no library for {flag}")


def test_version():
    for opt in ("--version", "-V"):
        assert run(opt, check=True).stdout == f"roceval {version()}\n"


@pytest.mark.parametrize("prefix", [None, "/opt/rv"])
def test_make_install(tmp_path, prefix, good_capture):
    dest = tmp_path / "root"
    make("install", f"DESTDIR={dest}", *([f"PREFIX={prefix}"] if prefix else []))
    prefix = prefix or "/usr/local"  # the default
    sbin = dest / prefix.lstrip("/") / "sbin" / "roceval"
    assert stat.S_IMODE(sbin.stat().st_mode) == 0o755
    assert sbin.read_bytes() == ROCEVAL.read_bytes()
    man = dest / prefix.lstrip("/") / "share/man/man8/roceval.8"
    assert man.read_text() == (ROOT / "docs" / "roceval.8").read_text()
    unit = (dest / prefix.lstrip("/") / "lib/systemd/system/roceval.service").read_text()
    # the unit starts the binary from where it was installed, and nothing from anywhere else
    execs = re.findall(r"^Exec\w+=(\S+)", unit, re.M)
    assert execs.count(f"{prefix}/sbin/roceval") == 2 and set(execs) == {f"{prefix}/sbin/roceval", "/bin/kill"}
    assert (dest / prefix.lstrip("/") / "lib/sysusers.d/roceval.conf").read_text() == \
        (ROOT / "deploy" / "roceval.sysusers").read_text()
    assert_unit_names_installed_files(unit, dest)
    assert_runs_like_the_tree(sbin, good_capture[0])


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    if not shutil.which("dpkg-shlibdeps"):
        pytest.skip("dpkg-shlibdeps (Debian package dpkg-dev) is not installed")
    path = tmp_path_factory.mktemp("deb") / "roceval.deb"
    make("deb", f"DEB={path}")
    return path


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True,
                          check=True).stdout.strip()


def needed(elf):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]",
                      subprocess.run(["readelf", "-d", elf], capture_output=True, text=True).stdout)


def dlopened():
    """The sonames of the libraries the Makefile has the code open rather than link: those of
    the files the linker would take for them."""
    sonames = []
    for lib in make_var("DLOPEN_LIBS"):
        path = subprocess.run(["cc", f"-print-file-name=lib{lib}.so"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
        sonames.append(re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", dynamic).group(1))
    return sonames


def test_dlopened_libraries_are_not_linked():
    """A process that does not serve HTTP does not load libmicrohttpd and the TLS libraries under
    it: the binary does not need it, and names the soname it opens."""
    sonames = dlopened()
    assert any(s.startswith("libmicrohttpd.so.") for s in sonames), sonames
    for soname in sonames:
        assert soname not in needed(ROCEVAL)
        assert soname.encode() in ROCEVAL.read_bytes()


def test_deb_depends_on_every_library_the_binary_needs(deb):
    assert field(deb, "Package") == "roceval" and field(deb, "Version") == f"{version()}-1"
    depends = {d.split()[0] for d in field(deb, "Depends").split(", ")}
    assert "libbpf.so.1" in needed(ROCEVAL) and "libxdp.so.1" in needed(ROCEVAL)
    ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for soname in needed(ROCEVAL) + dlopened():
        path = re.search(rf"^\s+{re.escape(soname)} \(libc6[^)]*\) => (\S+)$", ldconfig, re.M).group(1)
        # /lib and /usr/lib are one directory on Debian 12: dpkg knows the file under one of them
        real = os.path.realpath(path)
        owners = [subprocess.run(["dpkg", "-S", p], capture_output=True, text=True).stdout
                  for p in (real, real.removeprefix("/usr"), "/usr" + real)]
        pkg = next(o for o in owners if o).split(":")[0]
        assert pkg in depends, (soname, pkg, depends)
    # libibverbs without its providers finds no RDMA device: recommended where it is linked
    recommends = subprocess.run(["dpkg-deb", "-f", deb, "Recommends"], capture_output=True, text=True).stdout.strip()
    assert recommends == ("ibverbs-providers" if "libibverbs.so.1" in needed(ROCEVAL) else ""), recommends


def test_deb_installs_and_runs(deb, tmp_path, good_capture):
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    owners = {line.split()[1] for line in files.splitlines()}
    assert owners == {"root/root"}
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "lib/systemd/system/roceval.service", "usr/lib/sysusers.d/roceval.conf", "usr/sbin/roceval",
        "usr/share/doc/roceval/README.md", "usr/share/doc/roceval/copyright",
        *(f"usr/share/doc/roceval/docs/{d.name}" for d in sorted((ROOT / "docs").glob("*.md"))),
        "usr/share/doc/roceval/roceval.conf.example", "usr/share/man/man8/roceval.8.gz"]
    # the README's links to its topic files hold where the package puts them
    for doc in (ROOT / "docs").glob("*.md"):
        assert (root / "usr/share/doc/roceval/docs" / doc.name).read_text() == doc.read_text()
    assert_runs_like_the_tree(root / "usr/sbin/roceval", good_capture[0])
    with gzip.open(root / "usr/share/man/man8/roceval.8.gz", "rt") as f:
        assert f.read() == (ROOT / "docs" / "roceval.8").read_text()
    unit = (root / "lib/systemd/system/roceval.service").read_text()
    assert "ExecStart=/usr/sbin/roceval daemon " in unit and "/usr/local" not in unit
    assert_unit_names_installed_files(unit, root)

    # the postinst's own command creates the user the unit names, here in the scratch root
    user = re.search(r"^User=(\w+)$", unit, re.M).group(1)
    postinst = subprocess.run(["dpkg-deb", "--ctrl-tarfile", deb], capture_output=True, check=True).stdout
    assert b"systemd-sysusers roceval.conf" in postinst
    if shutil.which("systemd-sysusers"):
        (root / "etc").mkdir()
        subprocess.run(["systemd-sysusers", f"--root={root}", "roceval.conf"], check=True,
                       capture_output=True)
        assert re.search(rf"^{user}:x:\d+:\d+:.*:/usr/sbin/nologin$", (root / "etc/passwd").read_text(), re.M)


def test_apt_resolves_the_deb_on_a_fresh_system(deb, tmp_path):
    """apt, given an empty dpkg database, installs the package with its runtime libraries."""
    policy = subprocess.run(["apt-cache", "policy", "libxdp1"], capture_output=True, text=True).stdout
    if "Candidate: (none)" in policy or "Candidate:" not in policy:
        pytest.skip("apt has no package lists ('apt-get update' first)")
    empty = tmp_path / "status"
    empty.write_text("")
    res = subprocess.run(["apt-get", "install", "-s", "-o", f"Dir::State::status={empty}", str(deb)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    installs = set(re.findall(r"^Inst (\S+)", res.stdout, re.M))
    assert {"roceval", "libbpf1", "libxdp1", "libpcap0.8", "zlib1g", "libc6"} <= installs


def daemonset():
    yaml = pytest.importorskip("yaml", reason="python3-yaml is needed to read the DaemonSet")
    return next(d for d in yaml.safe_load_all((ROOT / "deploy/roceval-daemonset.yaml").read_text())
                if d["kind"] == "DaemonSet")


def test_the_image_is_built_from_the_package():
    docker = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)", docker, re.M)
    assert stages == ["debian:12", "debian:12-slim"]
    build, final = docker.split("FROM debian:12-slim")
    assert "apt-get install -y --no-install-recommends /tmp/roceval.deb" in final
    assert re.search(r"^RUN make clean && make .*\bdeb\b", build, re.M)

    c = daemonset()["spec"]["template"]["spec"]["containers"][0]
    image = re.search(r"^IMAGE \s*\?= (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert c["image"] == f"{image}:{version()}"
    # the DaemonSet runs the image's own ENTRYPOINT and CMD, which `make image-test` runs, with
    # the address it serves on
    entry = json.loads(re.search(r"^ENTRYPOINT (.*)$", final, re.M).group(1))
    cmd = json.loads(re.search(r"^CMD (.*)$", final, re.M).group(1))
    port = c["ports"][0]["containerPort"]
    assert c["command"] == entry + cmd + ["--listen", f"$(NODE_IP):{port}"]
    assert entry == ["/usr/sbin/roceval"] and "/etc/roceval/roceval.conf" in cmd
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert {"/sys/fs/bpf", "/run/roceval", "/etc/roceval"} <= mounts.keys()


def test_the_build_stage_installs_what_the_makefile_builds_with():
    """Every library the Makefile links (LDLIBS, as make reads it) comes from a package the
    Dockerfile's build stage and `make deps` install by name; the build stage also has the tools
    `make deb` runs."""
    docker = (ROOT / "Dockerfile").read_text().split("FROM debian:12-slim")[0]
    build = set(re.search(r"apt-get install -y --no-install-recommends \\\n(.*?)&&", docker, re.S)
                .group(1).replace("\\", " ").split())
    deps = set(make_var("DEPS"))
    libs = {flag: library_package(flag) for flag in make_var("LDLIBS") if flag.startswith("-l")}
    libs |= {f"-l{lib}": library_package(f"-l{lib}") for lib in make_var("DLOPEN_LIBS")}
    assert {"-lbpf", "-lxdp", "-lmicrohttpd", "-lncursesw"} <= libs.keys()
    for flag, pkg in libs.items():
        assert pkg in build, f"{flag}: the Dockerfile's build stage does not install {pkg}"
        assert pkg in deps, f"{flag}: make deps does not install {pkg}"
    for pkg in ("clang", "bpftool", "gcc", "make", "dpkg-dev", "binutils"):
        assert pkg in build, pkg


def test_make_image_needs_no_registry():
    """make image makes a missing base from the host's Debian mirror, and podman builds with
    chroot isolation, pulling nothing."""
    res = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "image", "ENGINE=podman"],
                         capture_output=True, text=True, check=True).stdout
    assert "deploy/base-image.sh podman" in res
    assert re.search(r"^podman build --isolation chroot --pull=never --network host\s+-t \S+:"
                     rf"{re.escape(version())} \.$", res.replace("\\\n", " "), re.M), res


def test_ci_runs_the_image_test():
    lines = [x.strip() for x in (ROOT / ".ci/run").read_text().splitlines()]
    tests = [i for i, x in enumerate(lines) if re.search(r"\bmake test\b", x)]
    assert tests and lines.index("make image-test") > tests[-1]


def test_the_daemonset_memory_holds_the_maps(netns):
    """The BPF maps an attachment makes are charged to the pod that makes them: its limit holds
    those of the 8 interfaces its comment says it fits, with the 25 MiB a program's load takes
    and the 9 MiB the daemon keeps resident (measured on the test machine), and its request
    those of one."""
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    try:
        prog = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "pinned",
                                          str(pin_dir(netns.if_rx, netns.rx) / "prog")],
                                         capture_output=True, text=True, check=True).stdout)
        maps = sum(json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(m)],
                                             capture_output=True, text=True, check=True).stdout)
                   ["bytes_memlock"] for m in prog["map_ids"])
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    resources = daemonset()["spec"]["template"]["spec"]["containers"][0]["resources"]
    mib = 1 << 20

    def size(q):
        return int(q.removesuffix("Mi")) * mib

    assert maps > 32 * mib  # the flow and connection tables: this is what dominates
    assert size(resources["limits"]["memory"]) >= 8 * maps + 34 * mib
    assert size(resources["requests"]["memory"]) >= maps + 9 * mib
