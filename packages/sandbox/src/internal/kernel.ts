/**
 * The persistent Python kernel's driver, written into each sandbox and run by `/usr/bin/python3`
 * inside it. It speaks JSON lines: one request per line on stdin, one answer per line on the file
 * descriptor that was stdout when it started. Code's own stdout and stderr (and those of the
 * processes it starts) never reach that descriptor, so nothing a user prints can forge an answer.
 *
 * Requests: `{"op":"execute","code":…}`, `{"op":"load","name":…,"columns":[…],"rows":[[…]]}`,
 * `{"op":"status"}`. pandas and matplotlib are imported only when code uses them, so the kernel is
 * ready in tens of milliseconds.
 *
 * Kept as a string so the package ships one artefact per module whatever the bundler does with
 * non-TypeScript files. It must not contain a backtick or a dollar-brace.
 *
 * @internal
 */
export const kernelSource = String.raw`
import ast, io, json, os, sys, time, traceback

WORKSPACE = "/sandbox/files"
LIBRARY = os.path.join(WORKSPACE, "library")

# The answers go to a private copy of the original stdout; fd 1 and 2 then point at stderr, which
# the server drains and drops, so a subprocess writing to fd 1 cannot corrupt the protocol.
_answers = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
_requests = sys.stdin

namespace = {"__name__": "__main__", "__builtins__": __builtins__}
_signatures = {}
_figure_counter = [0]


class _Capture(io.TextIOBase):
    def __init__(self):
        self.parts = []

    def writable(self):
        return True

    def write(self, text):
        self.parts.append(str(text))
        return len(text)

    def text(self):
        return "".join(self.parts)


def _answer(payload):
    _answers.write(json.dumps(payload, default=str) + "\n")
    _answers.flush()


def _frames():
    pd = sys.modules.get("pandas")
    if pd is None:
        return {}
    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("_") or not isinstance(value, pd.DataFrame):
            continue
        found[name] = value
    return found


def _frame_info(name, frame, memory=False):
    info = {"name": name, "num_rows": int(frame.shape[0]), "num_cols": int(frame.shape[1])}
    if memory:
        try:
            info["memory_usage_bytes"] = int(frame.memory_usage(deep=True).sum())
        except Exception:
            info["memory_usage_bytes"] = 0
    return info


def _signature(frame):
    return (id(frame), frame.shape, tuple(map(str, frame.columns)))


def _changed_frames():
    changed = []
    current = _frames()
    for name, frame in current.items():
        signature = _signature(frame)
        if _signatures.get(name) != signature:
            changed.append(_frame_info(name, frame))
        _signatures[name] = signature
    for name in list(_signatures):
        if name not in current:
            del _signatures[name]
    return changed


def _workspace_state():
    state = {}
    for root, dirs, files in os.walk(WORKSPACE):
        dirs[:] = [d for d in dirs if not d.startswith(".") and os.path.join(root, d) != LIBRARY]
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            try:
                stat = os.lstat(path)
            except OSError:
                continue
            state[os.path.relpath(path, WORKSPACE)] = (stat.st_mtime_ns, stat.st_size)
    return state


def _save_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for number in plt.get_fignums():
        _figure_counter[0] += 1
        name = "figure-%d.png" % _figure_counter[0]
        while os.path.exists(os.path.join(WORKSPACE, name)):
            _figure_counter[0] += 1
            name = "figure-%d.png" % _figure_counter[0]
        plt.figure(number).savefig(os.path.join(WORKSPACE, name), format="png", bbox_inches="tight")
    plt.close("all")


def _run(code, capture):
    tree = ast.parse(code, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), namespace)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), namespace)
        if value is not None:
            capture.write(repr(value) + "\n")


def _reap():
    # What a cell started and left running (in a session of its own, it would outlive the cell and
    # go on burning the sandbox's CPU): every process of the sandbox but this one and its ancestors.
    keep = set()
    pid = os.getpid()
    while pid > 0 and pid not in keep:
        keep.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except Exception:
            break
    me = os.getpid()
    children = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep:
            try:
                with open("/proc/%s/stat" % name) as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                os.kill(int(name), 9)
                if parent == me:
                    children.append(int(name))
            except Exception:
                pass
    # Its own children are reaped here (killed, they end at once); the sandbox's init reaps the rest.
    for child in children:
        try:
            os.waitpid(child, 0)
        except ChildProcessError:
            pass


def execute(code):
    before = _workspace_state()
    capture = _Capture()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    error = None
    started = time.monotonic()
    try:
        _run(code, capture)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are results of the cell too
        error = "executing Python code: %r" % (exc,)
        frames = traceback.extract_tb(exc.__traceback__)
        cell = [f for f in frames if f.filename == "<cell>"]
        if cell:
            capture.write("line %d: %s\n" % (cell[-1].lineno, error))
    finally:
        sys.stdout, sys.stderr = saved
    elapsed = int((time.monotonic() - started) * 1000)
    _reap()
    try:
        _save_figures()
    except Exception as exc:
        error = error or "saving figures: %r" % (exc,)
    after = _workspace_state()
    files = sorted(path for path, state in after.items() if before.get(path) != state)
    text = capture.text()
    output = text.splitlines() if text else None
    answer = {"output": output, "execution_time_ms": elapsed, "files": files, "dataframes": _changed_frames()}
    if error is not None:
        answer["error"] = error
    return answer


def load(name, columns, rows, append=False):
    import pandas as pd
    frame = pd.DataFrame.from_records(rows, columns=columns)
    if append and isinstance(namespace.get(name), pd.DataFrame):
        # The rows arrive in batches: each after the first is added to what came before.
        frame = pd.concat([namespace[name], frame], ignore_index=True)
    for column in frame.columns:
        if frame[column].dtype == object:
            try:
                frame[column] = pd.to_numeric(frame[column])
            except (ValueError, TypeError):
                pass
    namespace[name] = frame
    _signatures[name] = _signature(frame)
    with pd.option_context("display.max_columns", 20, "display.width", 200):
        preview = frame.head(20).to_string()
    return {"preview": preview, "num_rows": int(frame.shape[0]), "num_cols": int(frame.shape[1])}


def status():
    rss = 0
    try:
        with open("/proc/self/statm") as statm:
            rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except Exception:
        pass
    frames = [_frame_info(name, frame, memory=True) for name, frame in _frames().items()]
    return {"memory_usage_bytes": rss, "dataframes": frames}


_answer({"ready": True})
for line in _requests:
    try:
        request = json.loads(line)
        op = request.get("op")
        if op == "execute":
            _answer(execute(request["code"]))
        elif op == "load":
            _answer(load(request["name"], request["columns"], request["rows"], request.get("append", False)))
        elif op == "status":
            _answer(status())
        else:
            _answer({"failure": "unknown operation %r" % (op,)})
    except BaseException as exc:
        _answer({"failure": "%r" % (exc,)})
`
