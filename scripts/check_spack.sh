#!/bin/sh
# Checks the Spack recipe packaging/spack/package.py against the CMake
# project, without Spack: the recipe is loaded with a small stand-in for
# `spack.package` that records its variants and directives, and its
# cmake_args() is called for every combination of its boolean variants.
#   - every RP_* option the recipe passes is an option (or cache variable)
#     of CMakeLists.txt, and every other -D is one of CMake's own;
#   - every RP_WITH_* option of CMakeLists.txt has a variant of the same
#     name (rp_with_cuda: +cuda), and the recipe passes it ON and OFF;
#   - CMake accepts the arguments of two specs: the configure succeeds and
#     warns of no "Manually-specified variables ... not used", when BUILD
#     is given.
# usage: scripts/check_spack.sh [BUILD_DIR_FOR_THE_CONFIGURE_CHECK]
# The test spack_recipe runs it.
set -eu
cd "$(dirname "$0")/.."
python3 - "${1:-}" <<'EOF'
import itertools, os, re, subprocess, sys, tempfile, types

recipe = "packaging/spack/package.py"
cmakelists = open("CMakeLists.txt").read()
options = set(re.findall(r"^\s*option\((\w+)", cmakelists, re.M))
options |= set(re.findall(r"^\s*set\((\w+)\s+[^)]*\bCACHE\b", cmakelists, re.M))
cmake_own = {"CMAKE_CUDA_ARCHITECTURES", "CMAKE_CUDA_COMPILER",
             "CMAKE_BUILD_TYPE", "CMAKE_INSTALL_PREFIX"}
errors = []

# --- a stand-in for spack.package -------------------------------------
variants, depends, conflicts = {}, [], []

def variant(name, default=None, description="", values=None, multi=False,
            when=None):
    variants[name] = default

def depends_on(spec, when=None, type=None):
    depends.append((spec, when))

def conflicts_(spec, when=None, msg=None):
    conflicts.append((spec, when))

class Prefix(str):
    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))

class Spec:
    def __init__(self, values):
        self.values = values            # variant -> bool / tuple
        self.variants = {k: types.SimpleNamespace(value=v)
                         for k, v in values.items()}
    def satisfies(self, expr):
        for sign, name in re.findall(r"([+~])(\w+)", expr):
            if bool(self.values.get(name)) != (sign == "+"):
                return False
        return True
    __contains__ = satisfies
    def __getitem__(self, dep):
        return types.SimpleNamespace(prefix=Prefix("/opt/" + dep))

class CMakePackage:
    def __init__(self, spec):
        self.spec = spec
    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            return "-D%s:BOOL=%s" % (name, "ON" if value else "OFF")
        if isinstance(value, (list, tuple)):
            value = ";".join(value)
        return "-D%s:STRING=%s" % (name, value)
    def define_from_variant(self, name, var):
        return self.define(name, bool(self.spec.values[var]))

class CudaPackage:
    pass

pkg = types.ModuleType("spack.package")
for k, v in dict(variant=variant, depends_on=depends_on,
                 conflicts=conflicts_, version=lambda *a, **k: None,
                 license=lambda *a, **k: None,
                 maintainers=lambda *a, **k: None,
                 CMakePackage=CMakePackage, CudaPackage=CudaPackage).items():
    setattr(pkg, k, v)
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = pkg
variants["cuda"] = False                # from CudaPackage
variants["cuda_arch"] = ("none",)
ns = {"__name__": "reprise_recipe"}
exec(compile(open(recipe).read(), recipe, "exec"), ns)
Reprise = ns["Reprise"]

# --- every combination of the boolean variants -------------------------
flags = sorted(k for k, v in variants.items() if isinstance(v, bool))
seen = {}                               # option -> set of values
def args_of(values):
    return Reprise(Spec(values)).cmake_args()
for combo in itertools.product([False, True], repeat=len(flags)):
    values = dict(zip(flags, combo))
    values["cuda_arch"] = ("90",) if values.get("cuda") else ("none",)
    spec = Spec(values)
    if any(spec.satisfies(c) and (w is None or spec.satisfies(w))
           for c, w in conflicts):
        continue
    for a in args_of(values):
        m = re.match(r"-D(\w+)(?::\w+)?=(.*)$", a)
        if not m:
            errors.append("not a -D argument: %r" % a)
            continue
        seen.setdefault(m.group(1), set()).add(m.group(2))

for name in sorted(seen):
    if name.startswith("RP_") and name not in options:
        errors.append("the recipe passes %s, which CMakeLists.txt does not "
                      "define" % name)
    elif not name.startswith("RP_") and name not in cmake_own:
        errors.append("the recipe passes %s, not a known CMake variable" % name)
for opt in sorted(o for o in options if o.startswith("RP_WITH_")):
    var = opt[len("RP_WITH_"):].lower()
    if var not in variants:
        errors.append("%s has no variant '%s' in the recipe" % (opt, var))
    if seen.get(opt, set()) != {"ON", "OFF"}:
        errors.append("the recipe does not pass %s both ON and OFF (%s)"
                      % (opt, sorted(seen.get(opt, []))))
print("check_spack: %d variants (%s), %d options passed: %s"
      % (len(variants), ", ".join(sorted(variants)), len(seen),
         ", ".join(sorted(seen))))

# --- CMake accepts the arguments ----------------------------------------
build = sys.argv[1]
if build and not errors:
    base = {f: False for f in flags}
    base.update(openmp=True, cuda_arch=("none",))
    specs = [dict(base)]
    if "starpu" in variants:
        specs.append(dict(base, openmp=False, xrt=True, starpu=True, mpi=True))
    for i, values in enumerate(specs):
        d = os.path.join(build, "spack%d" % i)
        cmd = ["cmake", "-S", ".", "-B", d] + args_of(values)
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        out = r.stdout
        on = " ".join(k for k, v in values.items() if v is True)
        if r.returncode != 0:
            errors.append("cmake failed for +%s:\n%s" % (on, out[-3000:]))
        elif "not used by the project" in out:
            errors.append("cmake did not use some arguments for +%s:\n%s"
                          % (on, out[out.index("Manually-specified"):][:800]))
        else:
            m = re.search(r"reprise backends: .*", out)
            print("check_spack: cmake accepts +%s (%s)"
                  % (on, m.group(0) if m else "configured"))

for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
EOF
