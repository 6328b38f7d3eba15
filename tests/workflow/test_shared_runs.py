"""The main job's shared runs (``readme.shared_folder``) are made once per session, whatever the number of workers."""

import multiprocessing
import time

from readme import shared_folder


class Scratch:
    """A worker's ``tmp_path_factory``: pytest-xdist gives each worker a folder under the session's."""

    def __init__(self, folder):
        self.folder = folder

    def getbasetemp(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder


def make_once(session, worker_id, started):
    started.wait()
    with shared_folder(Scratch(session / f"popen-{worker_id}"), worker_id, "run") as folder:
        if not folder.exists():
            time.sleep(0.5)  # a slow build: without the lock the other worker would start one too
            folder.mkdir()
            with open(session / "builds.log", "a") as log:
                log.write(f"{worker_id}\n")


def test_two_workers_make_a_shared_run_once(tmp_path):
    context = multiprocessing.get_context("fork")
    started = context.Event()
    workers = [context.Process(target=make_once, args=(tmp_path, name, started)) for name in ("gw0", "gw1")]
    for worker in workers:
        worker.start()
    started.set()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert len((tmp_path / "builds.log").read_text().split()) == 1
    assert (tmp_path / "run").is_dir()


def test_a_single_process_session_keeps_the_run_in_its_own_folder(tmp_path):
    with shared_folder(Scratch(tmp_path / "session"), "master", "run") as folder:
        assert folder == tmp_path / "session" / "run"
