// Prompt Runner dashboard: the overview and run pages.
//
// Everything a run wrote (agent text, tool output, paths, names) is untrusted:
// it reaches the DOM only as text nodes (append of a string, textContent),
// never as markup. The server's Content-Security-Policy allows no inline script.
"use strict";

(function () {
  const CSRF = document.querySelector('meta[name="pr-csrf"]').content;
  const DEFAULT_AUTHOR = document.querySelector('meta[name="pr-author"]').content;
  const MAX_EVENTS = 5000; // events kept in the page; older ones load on demand

  // -- helpers ----------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, String(value));
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
    }
    return node;
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return "–";
    let s = Math.max(0, Math.floor(ms / 1000));
    const h = Math.floor(s / 3600);
    s -= h * 3600;
    const m = Math.floor(s / 60);
    s -= m * 60;
    if (h) return `${h}h${String(m).padStart(2, "0")}m`;
    if (m) return `${m}m${String(s).padStart(2, "0")}s`;
    return `${s}s`;
  }

  function count(n) {
    if (!n) return "0";
    return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : String(n);
  }

  function clock(ms) {
    if (!ms) return "";
    const d = new Date(ms);
    return d.toTimeString().slice(0, 8);
  }

  function untilText(iso) {
    const d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toLocaleString();
  }

  async function getJSON(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `${response.status}`);
    return body;
  }

  async function postJSON(url, body) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      doc = { state: "refused", reason: text.trim() || `HTTP ${response.status}` };
    }
    if (!response.ok && !doc.state) doc = { state: "refused", reason: doc.error || `HTTP ${response.status}` };
    return doc;
  }

  function setConn(state, text) {
    const conn = document.getElementById("conn");
    conn.dataset.state = state;
    conn.textContent = text;
  }

  // A server-sent event stream that reopens itself with a fresh address (offsets).
  function stream(address, handlers) {
    let source = null;
    let closed = false;
    function open() {
      source = new EventSource(address());
      source.onopen = () => setConn("live", "live");
      source.onerror = () => {
        setConn("lost", "reconnecting…");
        source.close();
        if (!closed) setTimeout(open, 1000);
        if (handlers.reconnect) handlers.reconnect();
      };
      for (const [name, handler] of Object.entries(handlers)) {
        if (name === "reconnect") continue;
        source.addEventListener(name, (e) => handler(JSON.parse(e.data)));
      }
    }
    open();
    return {
      reopen() {
        source.close();
        open();
      },
      close() {
        closed = true;
        source.close();
      },
    };
  }

  // -- rows (both pages) ------------------------------------------------------------

  const rows = new Map(); // key -> {row, received}

  function stateText(row) {
    if (row.state === "down") return "DOWN";
    if (row.state === "waiting") return row.waiting_until ? `waiting until ${untilText(row.waiting_until)}` : "waiting";
    return row.state;
  }

  function promptText(row) {
    if (!row.prompt_id) return "–";
    const position = row.prompt_index ? `${row.prompt_index}/${row.prompt_total} · ` : "";
    return `${position}${row.prompt_id} ${row.prompt_name || ""}`.trim();
  }

  function tokensText(row) {
    const t = row.tokens || {};
    if (!t.input && !t.output) return "–";
    return `${count(t.input)} in · ${count(t.output)} out`;
  }

  function renderRow(tr, row, linked) {
    tr.replaceChildren();
    tr.dataset.key = row.key;
    tr.dataset.state = row.state;
    const name = linked ? el("a", { href: `/runs/${encodeURIComponent(row.key)}` }, row.name) : row.name;
    const notes = (row.notes || []).length ? el("span", { class: "warn", title: row.notes.join("\n") }, " ⚠") : null;
    tr.append(
      el("td", { class: "name" }, name, notes),
      el("td", { class: "state", "data-state": row.state }, stateText(row)),
      el("td", { class: "prompt" }, promptText(row)),
      el("td", { class: "attempt" }, row.attempt ? `#${row.attempt} ${row.mode || ""}` : "–"),
      el("td", { class: "elapsed" }, duration(row.elapsed_ms)),
      el("td", { class: "quiet" }, duration(row.quiet_ms)),
      el("td", { class: "tokens" }, tokensText(row)),
      el("td", { class: "cost" }, row.cost_usd ? `$${row.cost_usd.toFixed(4)}` : "–"),
      el("td", { class: "steers" }, String(row.steer_count || 0)),
    );
  }

  // On the overview a fleet's members are one group: a <tbody data-fleet> of its
  // own, headed by the fleet's name and how many members are in each state.
  function fleetBody(fleet) {
    const table = document.getElementById("runs");
    let body = table.querySelector(`tbody[data-fleet="${CSS.escape(fleet)}"]`);
    if (!body) {
      body = el("tbody", { class: "fleet", "data-fleet": fleet });
      body.append(el("tr", { class: "fleet-head" }, el("th", { colSpan: 9 })));
      table.append(body);
    }
    return body;
  }

  function renderFleetHead(body) {
    const states = new Map();
    let members = 0;
    for (const tr of body.querySelectorAll("tr[data-key]")) {
      members += 1;
      const word = tr.querySelector("td.state").textContent.startsWith("waiting") ? "waiting" : tr.dataset.state;
      states.set(word, (states.get(word) || 0) + 1);
    }
    const counts = [...states.entries()].map(([state, n]) => `${n} ${state === "down" ? "DOWN" : state}`);
    body.querySelector("tr.fleet-head th").textContent = `fleet ${body.dataset.fleet} · ${members} member${members === 1 ? "" : "s"} · ${counts.join(" · ")}`;
  }

  function putRow(row, linked) {
    rows.set(row.key, { row, received: Date.now() });
    const grouped = linked && row.fleet;
    const body = grouped ? fleetBody(row.fleet) : document.querySelector("#runs tbody");
    let tr = body.querySelector(`tr[data-key="${CSS.escape(row.key)}"]`);
    if (!tr) {
      tr = el("tr");
      body.append(tr);
    }
    renderRow(tr, row, linked);
    if (grouped) renderFleetHead(body);
  }

  function tick() {
    for (const { row, received } of rows.values()) {
      const tr = document.querySelector(`#runs tr[data-key="${CSS.escape(row.key)}"]`);
      if (!tr) continue;
      const since = Date.now() - received;
      if (row.live) tr.querySelector(".elapsed").textContent = duration(row.elapsed_ms + since);
      if (row.quiet_ms !== null && row.quiet_ms !== undefined)
        tr.querySelector(".quiet").textContent = duration(row.quiet_ms + since);
    }
  }

  // -- the overview page --------------------------------------------------------------

  function overviewPage() {
    stream(() => "/api/stream", {
      rows(doc) {
        for (const row of doc.runs) putRow(row, true);
      },
      row(row) {
        putRow(row, true);
      },
    });
    setInterval(tick, 1000);
  }

  // -- the run page -----------------------------------------------------------------

  function runPage() {
    const key = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
    const api = `/api/runs/${encodeURIComponent(key)}`;
    const eventsBox = document.getElementById("events");
    const logBox = document.getElementById("log");
    const olderButton = document.getElementById("older");
    const answersBox = document.getElementById("answers");
    const authorInput = document.getElementById("author");
    const storageKey = `pr-answers-${key}`;
    let evStart = 0;
    let evEnd = null;
    let logEnd = null;
    let streamId = null;
    let live = null;
    const early = new Map(); // answers that arrived before their POST returned
    let answers = [];
    let promptIds = [];

    authorInput.value = localStorage.getItem("pr-author") || DEFAULT_AUTHOR;
    authorInput.addEventListener("change", () => localStorage.setItem("pr-author", authorInput.value));

    // events ----------------------------------------------------------------------
    function eventNode(item) {
      const node = el(
        "div",
        { class: "ev", "data-kind": item.kind, "data-off": item.off },
        el("span", { class: "t" }, clock(item.at_ms)),
        item.prompt_id ? el("span", { class: "pid" }, `[${item.prompt_id}]`) : null,
        el("span", { class: "line" }, item.line || `[${item.kind}]`),
      );
      if (item.patch) {
        const label = item.patch_source === "reconstructed" ? "patch (reconstructed from the tool's input)" : "patch (the tool's own)";
        node.append(el("details", {}, el("summary", {}, label), diffNode(item.patch)));
      }
      if (item.output) node.append(el("details", {}, el("summary", {}, "output"), el("pre", { class: "out" }, item.output)));
      return node;
    }

    function diffNode(text) {
      const pre = el("pre", { class: "diff" });
      for (const line of text.split("\n")) {
        let cls = "";
        if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
        else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
        else if (line.startsWith("@@")) cls = "hunk";
        pre.append(el("span", { class: cls }, line), "\n");
      }
      return pre;
    }

    function atBottom(box) {
      return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    }

    function appendEvents(items) {
      const stick = atBottom(eventsBox);
      for (const item of items) if (item.line !== "" || item.patch) eventsBox.append(eventNode(item));
      while (eventsBox.childElementCount > MAX_EVENTS) {
        eventsBox.firstElementChild.remove();
        const first = eventsBox.firstElementChild;
        evStart = first ? Number(first.dataset.off) : evStart;
        olderButton.hidden = false;
      }
      if (stick) eventsBox.scrollTop = eventsBox.scrollHeight;
    }

    async function firstEvents() {
      const page = await getJSON(`${api}/events`);
      eventsBox.replaceChildren();
      appendEvents(page.items);
      eventsBox.scrollTop = eventsBox.scrollHeight;
      evStart = page.start;
      evEnd = page.end;
      streamId = page.stream;
      olderButton.hidden = !page.more_before;
    }

    olderButton.addEventListener("click", async () => {
      const page = await getJSON(`${api}/events?before=${evStart}`);
      const height = eventsBox.scrollHeight;
      const nodes = page.items.filter((i) => i.line !== "" || i.patch).map(eventNode);
      eventsBox.prepend(...nodes);
      eventsBox.scrollTop += eventsBox.scrollHeight - height;
      evStart = page.start;
      olderButton.hidden = !page.more_before;
    });

    // control log -------------------------------------------------------------------
    function logNode(item) {
      const outcome = item.outcome || "";
      return el(
        "div",
        { class: "entry", "data-outcome": outcome, "data-command": item.command || "" },
        el("span", { class: "t" }, (item.at || "").replace("T", " ").slice(0, 19)),
        el("span", { class: "cmd" }, item.command || "?"),
        el("span", { class: "outcome" }, outcome),
        el("span", { class: "by" }, item.author ? `by ${item.author}` : ""),
        item.prompt_id ? el("span", { class: "pid" }, `[${item.prompt_id}]`) : null,
        item.reason ? el("span", { class: "reason" }, item.reason) : null,
        item.params ? el("span", { class: "params" }, item.params) : null,
      );
    }

    async function firstLog() {
      const page = await getJSON(`${api}/log`);
      logBox.replaceChildren(...page.items.map(logNode));
      logEnd = page.end;
    }

    // prompts -------------------------------------------------------------------------
    function reportNode(report) {
      if (!report) return el("p", { class: "muted" }, "no verifier report");
      const list = el("ul", { class: "report" });
      for (const item of report.items) {
        const where = [item.repo, item.path, item.command ? JSON.stringify(item.command) : null].filter(Boolean).join(" ");
        const li = el(
          "li",
          { "data-pass": item.pass ? "yes" : "no" },
          el("span", { class: "mark" }, item.pass ? "✓" : "✗"),
          ` ${item.kind} ${where}`,
          item.details ? el("div", { class: "details" }, item.details) : null,
        );
        if (item.output) li.append(el("details", {}, el("summary", {}, "output"), el("pre", { class: "out" }, item.output)));
        list.append(li);
      }
      return el("div", {}, el("p", {}, report.pass ? "contract passes" : `${report.unmet} unmet`), list);
    }

    function attemptsNode(attempts) {
      const table = el("table", { class: "attempts" });
      table.append(
        el("tr", {}, ...["#", "mode", "status", "failure", "duration", "cost", "decision"].map((h) => el("th", {}, h))),
      );
      for (const a of attempts) {
        table.append(
          el(
            "tr",
            {},
            el("td", {}, String(a.attempt ?? "")),
            el("td", {}, a.mode || ""),
            el("td", {}, a.status || ""),
            el("td", {}, [a.failure_class, a.failure_message].filter(Boolean).join(": ")),
            el("td", {}, a.duration_ms !== null && a.duration_ms !== undefined ? duration(a.duration_ms) : ""),
            el("td", {}, a.cost_usd ? `$${Number(a.cost_usd).toFixed(4)}` : ""),
            el("td", {}, [a.decision, a.reason].filter(Boolean).join(": ")),
          ),
        );
      }
      return table;
    }

    function commitNode(repo, sha) {
      const box = el("div", { class: "commit" });
      const button = el("button", { type: "button" }, `show ${repo} ${sha.slice(0, 10)}`);
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const doc = await getJSON(`${api}/commits/${encodeURIComponent(repo)}/${encodeURIComponent(sha)}`);
          box.append(diffNode(doc.text));
        } catch (e) {
          box.append(el("p", { class: "warn" }, String(e.message)));
        }
      });
      box.append(button);
      return box;
    }

    function promptNode(p, openIds) {
      const head = `${p.id} ${p.name || ""} · ${p.status} · ${p.attempts.length} attempt(s)` + (p.steer_count ? ` · ${p.steer_count} steer(s)` : "");
      const node = el("details", { class: "prompt", "data-id": p.id, "data-status": p.status }, el("summary", {}, head));
      node.open = openIds.has(p.id) || p.status === "running";
      if (p.error) node.append(el("p", { class: "warn" }, p.error));
      if (p.reason) node.append(el("p", {}, p.reason));
      if (p.attempts.length) node.append(attemptsNode(p.attempts));
      p.attempts.forEach((a) => {
        if (a.verifier) node.append(el("h4", {}, `attempt ${a.attempt} verifier report`), reportNode(a.verifier));
      });
      for (const [repo, sha] of Object.entries(p.commits || {})) node.append(commitNode(repo, sha));
      if (p.interventions.length) {
        node.append(el("h4", {}, "interventions"));
        const list = el("ul", {});
        for (const s of p.interventions) list.append(el("li", {}, `${s.at || ""} ${s.author || "?"} (${s.delivery || ""}): ${s.text}`));
        node.append(list);
      }
      if (p.amendments.length) {
        node.append(el("h4", {}, "amendments"));
        const list = el("ul", {});
        for (const a of p.amendments) list.append(el("li", {}, `${a.at || ""} ${a.author || "?"} ${a.direction} ${a.operation} ${a.change} — ${a.reason || ""}`));
        node.append(list);
      }
      return node;
    }

    function renderPrompts(prompts) {
      const box = document.getElementById("prompts");
      const openIds = new Set([...box.querySelectorAll("details.prompt[open]")].map((d) => d.dataset.id));
      box.replaceChildren(...prompts.map((p) => promptNode(p, openIds)));
      promptIds = prompts.map((p) => p.id);
      for (const select of document.querySelectorAll(".prompt-select")) {
        const chosen = select.value;
        select.replaceChildren(...promptIds.map((id) => el("option", { value: id }, id)));
        if (promptIds.includes(chosen)) select.value = chosen;
      }
    }

    let promptTimer = null;
    function reloadPrompts() {
      clearTimeout(promptTimer);
      promptTimer = setTimeout(async () => {
        try {
          const doc = await getJSON(api);
          showRow(doc.row);
          renderPrompts(doc.prompts);
        } catch (e) {
          /* the next change tries again */
        }
      }, 250);
    }

    // answers (action requests) --------------------------------------------------------
    function saveAnswers() {
      sessionStorage.setItem(storageKey, JSON.stringify(answers.slice(-50)));
    }

    function answerText(a) {
      let text = `${a.action} · ${a.state}`;
      if (a.reason) text += `: ${a.reason}`;
      return text;
    }

    function renderAnswers() {
      answersBox.replaceChildren(
        ...answers
          .slice()
          .reverse()
          .map((a) =>
            el(
              "li",
              { "data-state": a.state, "data-request": a.request || "", "data-history": a.history.join(" "), "data-action": a.action },
              el("span", { class: "what" }, answerText(a)),
              a.summary ? el("span", { class: "summary" }, a.summary) : null,
              a.detail && typeof a.detail === "string" ? el("pre", { class: "detail" }, a.detail) : null,
            ),
          ),
      );
      saveAnswers();
    }

    function settle(answer) {
      const a = answers.find((x) => x.request && x.request === answer.request);
      if (!a) {
        if (answer.request) early.set(answer.request, answer);
        return;
      }
      if (a.state !== "pending" || answer.state === "pending" || answer.state === "unknown") return; // final answers stay
      a.state = answer.state;
      a.reason = answer.reason;
      a.history.push(answer.state);
      renderAnswers();
    }

    async function send(action, params, summary) {
      const entry = { id: Date.now() + Math.random(), action, state: "sending", request: null, reason: null, history: [], summary };
      answers.push(entry);
      renderAnswers();
      let answer;
      try {
        answer = await postJSON(`${api}/actions/${action}`, { author: authorInput.value, ...params });
      } catch (e) {
        answer = { state: "refused", reason: `not sent: ${e.message}` };
      }
      entry.state = answer.state || "refused";
      entry.request = answer.request || null;
      entry.reason = answer.reason || null;
      entry.detail = answer.detail || null;
      entry.history.push(entry.state);
      renderAnswers();
      if (entry.request && early.has(entry.request)) settle(early.get(entry.request));
      return entry;
    }

    document.getElementById("steer-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const box = document.getElementById("steer-text");
      const text = box.value;
      const entry = await send("steer", { text }, text);
      if (entry.state !== "refused") box.value = "";
    });

    document.getElementById("view-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const params = {};
      for (const select of document.querySelectorAll("#view-form select")) if (select.value) params[select.dataset.setting] = select.value;
      await send("view", params, Object.entries(params).map(([k, v]) => `${k}=${v}`).join(" "));
    });

    document.getElementById("amend-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const clause = document.getElementById("amend-clause").value;
      const value = document.getElementById("amend-value").value.trim();
      let entry = value;
      if (clause === "contains") {
        const at = value.indexOf("=");
        entry = { path: at < 0 ? value : value.slice(0, at), text: at < 0 ? "" : value.slice(at + 1) };
      }
      await send(
        "amend",
        { prompt_id: document.getElementById("amend-prompt").value, add: value ? { [clause]: [entry] } : {}, reason: document.getElementById("amend-reason").value },
        `${clause} ${value}`,
      );
    });

    document.getElementById("relax-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const clause = document.getElementById("relax-clause").value.trim();
      const confirmBox = document.getElementById("relax-confirm");
      await send(
        "relax",
        {
          prompt_id: document.getElementById("relax-prompt").value,
          drop: clause ? [clause] : [],
          reason: document.getElementById("relax-reason").value,
          confirm: confirmBox.checked === true,
        },
        `drop ${clause}`,
      );
      confirmBox.checked = false; // each relax is confirmed on its own
    });

    for (const button of document.querySelectorAll("#run-form button[data-action]")) {
      button.addEventListener("click", () => send(button.dataset.action, {}, button.textContent));
    }

    function showRow(row) {
      putRow(row, false);
      live = row;
      document.getElementById("wake-send").hidden = row.state !== "waiting";
      const notes = (row.notes || []).join(" · ");
      document.getElementById("notes").textContent = notes;
    }

    async function recheckPending() {
      for (const a of answers) {
        if (a.state !== "pending" || !a.request) continue;
        try {
          settle(await getJSON(`${api}/requests/${encodeURIComponent(a.request)}`));
        } catch (e) {
          /* try again at the next reconnect */
        }
      }
    }

    // start ---------------------------------------------------------------------------
    async function start() {
      try {
        answers = JSON.parse(sessionStorage.getItem(storageKey) || "[]");
      } catch (e) {
        answers = [];
      }
      renderAnswers();
      const doc = await getJSON(api);
      document.getElementById("run-name").textContent = doc.row.fleet ? `${doc.row.fleet} › ${doc.row.name}` : doc.row.name;
      document.title = `Prompt Runner · ${doc.row.name}`;
      showRow(doc.row);
      renderPrompts(doc.prompts);
      await Promise.all([firstEvents(), firstLog()]);
      const handle = stream(() => `${api}/stream?events=${evEnd}&log=${logEnd}&stream=${encodeURIComponent(streamId)}`, {
        row(row) {
          showRow(row);
        },
        events(page) {
          appendEvents(page.items);
          evEnd = page.end;
        },
        log(page) {
          logBox.append(...page.items.map(logNode));
          logBox.scrollTop = logBox.scrollHeight;
          logEnd = page.end;
        },
        prompts() {
          reloadPrompts();
        },
        answer(answer) {
          settle(answer);
        },
        gap(doc) {
          eventsBox.append(el("div", { class: "gap" }, `… ${doc.skipped_bytes} bytes of events skipped (load them with “load older”)`));
        },
        async reset() {
          await firstEvents();
          handle.reopen();
          reloadPrompts();
        },
        reconnect() {
          recheckPending();
        },
      });
      recheckPending();
      setInterval(tick, 1000);
    }

    start().catch((e) => setConn("lost", `cannot load this run: ${e.message}`));
  }

  if (document.body.dataset.page === "overview") overviewPage();
  else runPage();
})();
