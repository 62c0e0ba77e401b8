"""The agent's directive protocol (SPEC 7), both halves of it.

* :mod:`.protocol` -- the names both halves share (environment variables,
  schemas, directives, exit codes) and the invocation an agent process was
  given, read from its environment;
* :mod:`.client` -- the agent's half: ``prompt-runner agent-control`` (and the
  simulated agent) write a directive or progress record;
* :mod:`.invocation` -- the runner's half of the files: the private
  directory, the token, sealing an invocation, and reading back what the
  agent wrote with authentication.

The runner's iteration loop that acts on directives is
:mod:`prompt_runner.runner.agent_control`. Nothing here imports the runner:
:mod:`.protocol` and :mod:`.client` import only the standard library (the
agent-control CLI's start-up and the simulated provider import them), and
:mod:`.invocation` only ``state.layout`` besides.
"""
