"""Every durable write of Prompt Runner: atomic files, JSONL, the run lock,
``progress.log``, the run journal and the runtime store (SPEC 6).

Import the submodules directly (``from prompt_runner.state.store import FileStore``);
this package module stays empty so importing one piece stays cheap.
"""
