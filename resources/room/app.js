// The room: the daemon's HTTP API seen from a browser. Everything an agent, a prompt or a console line says is put
// on the page as text (textContent), never as HTML, so nothing from them can run here. The API hands over text as it
// was written; what a requester wrote is made visible here (visible(): control characters as their pictures, bidi,
// zero-width and other invisible characters as ⟨U+202E⟩), the twin of desktop/core/visible.py.
"use strict";

const $ = (id) => document.getElementById(id);
const FINAL = new Set(["done", "failed", "cancelled", "expired"]);
const PAGE = 500;
let me = null;            // {you, owner, csrf}
let requests = [];        // newest first
let agents = [];
let tasks = [];
let events = null;
let current = null;       // the open request's page: {id, request, console: {...}}
let refreshing = null;
let picked = "";          // the agent the person chose to ask

// Cc but tab and newline; Cf (Unicode 15), Zl, Zp; lone surrogates; every default-ignorable code point.
// Keep in step with HIDDEN in visible.py.
const HIDDEN = new RegExp("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd" +
  "\\u070f\\u0890\\u0891\\u08e2\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e" +
  "\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb\\ud800-\\udfff\\u{110bd}\\u{110cd}" +
  "\\u{13430}-\\u{1343f}\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}]", "gu");
function picture(char) {
  const code = char.codePointAt(0);
  if (code < 0x20) return String.fromCodePoint(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}
function visible(text) { return String(text).replace(HIDDEN, picture); }

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = visible(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(typeof child === "string" ? visible(child) : child);
  return node;
}

function short(id) { return id.replace(/^R\d{8}-/, "R-"); }
function stateOf(r) { return r.denied ? "denied" : r.state; }  // denied is cancelled by the owner, and reads so
const plain = (text) => text.replace(/\x1b\[[0-9;:?]*[A-Za-z]/g, "");
function firstLine(text, max = 90) {  // one_line in visible.py: the first line, and how many follow
  const lines = visible(text || "").trim().split("\n");
  const line = Array.from(lines[0].trimEnd());  // counted in characters, as Python does
  const shown = line.length > max ? line.slice(0, max - 1).join("").trimEnd() + "…" : line.join("");
  const more = lines.slice(1).filter((rest) => rest.trim()).length;
  return shown + (more ? ` … ${more} more line${more !== 1 ? "s" : ""}` : "");
}
function clock(iso) { return new Date(iso).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"}); }
function left(iso) {
  const seconds = Math.max(0, Math.round((new Date(iso) - Date.now()) / 1000));
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${Math.floor(seconds % 3600 / 60)} min left`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)} min left`;
  return `${seconds} s left`;
}
let sayTimer = null;
function say(text, lasting = false) {  // a line at the bottom; gone after a while unless it is still true
  $("status").textContent = text;
  clearTimeout(sayTimer);
  if (text && !lasting) sayTimer = setTimeout(() => { $("status").textContent = ""; }, 8000);
}

async function api(path, body) {
  const init = {credentials: "same-origin", headers: {}};
  if (body !== undefined) {
    init.method = "POST";
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
    if (me) init.headers["X-CSRF-Token"] = me.csrf;
  }
  const answer = await fetch(path, init);
  const data = await answer.json().catch(() => ({}));
  if (answer.status === 401 && me) { signedOut("Your session ended; sign in again."); }
  if (!answer.ok) throw new Error(data.error || `the daemon answered ${answer.status}`);
  return data;
}

// --- signing in and out -----------------------------------------------------------------------------------

async function boot() {
  const code = new URLSearchParams(location.hash.replace(/^#\/?/, "")).get("code");
  if (code) {
    history.replaceState(null, "", location.pathname);  // the code is used once and not kept in history
    try { signedIn(await api("/room/exchange", {code})); return; }
    catch (error) { showSignIn(error.message); return; }
  }
  try { signedIn(await api("/room/me")); } catch { showSignIn(""); }
}

function showSignIn(message, notice = "") {  // an error in red, or a notice of how things stand
  me = null;
  for (const id of ["home", "request"]) $(id).hidden = true;
  $("signin").hidden = false;
  $("signout").hidden = true;
  $("you").textContent = "";
  $("signin-error").textContent = message;
  $("signin-note").textContent = notice;
  $("token").focus();
}

function signedOut(message) {
  if (events) { events.close(); events = null; }
  say("");  // not "Connection lost…": the stream was ended on purpose
  showSignIn("", message);
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const answer = await api("/room/signin", {token: $("token").value});
    $("token").value = "";
    signedIn(answer);
  } catch (error) {
    $("signin-note").textContent = "";
    $("signin-error").textContent = error.message;
  }
});

$("signout").addEventListener("click", async () => {
  try { await api("/room/signout", {}); } finally { signedOut("Signed out."); }
});

function signedIn(who) {
  me = who;
  $("signin").hidden = true;
  $("signout").hidden = false;
  $("you").textContent = visible(who.owner && who.you !== "owner" ? `${who.you} (owner)` : who.you);
  listen();
  refresh().then(route);
}

// --- live updates -----------------------------------------------------------------------------------------

function listen() {
  events = new EventSource("/api/events");
  events.onopen = () => say("");
  events.onerror = () => {
    if (events.readyState !== EventSource.CLOSED) { say("Connection lost; reconnecting…", true); return; }
    events = null;  // the daemon refused the stream: signed out, revoked, or the daemon restarted without us
    setTimeout(() => api("/room/me").then(listen, () => {}), 1000);
  };
  for (const kind of ["request", "runtime", "task_started", "task_finished", "task_failed", "lagged", "settings"]) {
    events.addEventListener(kind, soon);
  }
}

function soon() {  // many events in a burst make one refresh
  if (refreshing) return;
  refreshing = setTimeout(async () => { refreshing = null; await refresh(); if (current) await showCurrent(); }, 120);
}

async function refresh() {
  try {
    [requests, agents, tasks] = await Promise.all([api("/api/requests?limit=200"), api("/api/agents"),
                                                   api("/api/tasks")]);
  } catch (error) { say(error.message); return; }
  drawAgents();
  drawRequests();
  drawApprovals();
  drawTasks();
}

// --- the home page ----------------------------------------------------------------------------------------

function agentState(agent) {  // what it runs comes before what waits for it
  const its = requests.filter((r) => r.agent === agent.name);
  if (agent.state !== "idle" || its.some((r) => r.state === "running")) return "working";
  if (its.some((r) => r.state === "pending" || r.question)) return "waiting";
  return "idle";
}

function drawAgents() {
  $("agents").replaceChildren(...agents.map((agent) => {
    const state = agentState(agent);
    return el("li", {}, el("span", {text: `${agent.name} · ${agent.runtime}`}),
              el("span", {class: `state ${state}`, text: agent.status === "ready" ? state : agent.status}));
  }));
  $("agent").replaceChildren(...agents.map((agent) => el("option", {value: agent.name,
    text: agent.status === "ready" ? agent.name : `${agent.name} · ${agent.status}`})));
  const choice = agents.find((agent) => agent.name === picked) || agents.find((agent) => agent.status === "ready");
  if (choice) $("agent").value = choice.name;
}
$("agent").addEventListener("change", () => { picked = $("agent").value; });

function drawRequests() {
  $("no-requests").hidden = requests.length > 0;
  $("requests").replaceChildren(...requests.map((r) => {
    const progress = r.state === "running" && r.progress != null ? ` · ${Math.round(r.progress)}%` : "";
    return el("li", {}, el("a", {href: `#/r/${r.id}`},
      el("div", {class: "line1"}, el("span", {class: "id", text: short(r.id)}),
         el("span", {class: `state ${r.state}`, text: r.question ? "question" : stateOf(r)}),
         r.continuation_of ? el("span", {class: "badge continuation",
                                         text: `↻ background continuation of ${short(r.continuation_of)}`}) : "",
         el("span", {class: "what", text: `${sender(r)} → ${r.agent}${progress}`})),
      el("div", {class: "what", text: firstLine(r.prompt)})));
  }));
}

function continuationBadge(r) {  // on a request's page: the origin's ID opens it
  if (!r.continuation_of) return [];
  return [" ", el("span", {class: "badge continuation", title: "Woken when background tasks its origin's turn " +
                           "started had ended"}, "↻ background continuation of ",
                  el("a", {href: `#/r/${r.continuation_of}`, text: short(r.continuation_of)}))];
}

function sender(r) {
  return r.session ? `via agent · ${r.session.parent_title}` : r.requester;
}

function sessionLines(r) {
  if (!r.session) return [];
  const group = r.session.group ? ` · Group: ${r.session.group}` : "";
  return [el("p", {class: "hint session", text: `Session ${r.session.id} · ${r.session.runtime} in ` +
                   `${r.session.folder}${group} · ${sender(r)}`}),
          el("p", {class: "hint accounts", text: r.session.accounts})];
}

function drawApprovals() {
  const waiting = me.owner ? requests.filter((r) => r.state === "pending") : [];
  $("approvals").replaceChildren(...waiting.map((r) => el("div", {class: "card", "aria-label": `Approve ${r.id}?`},
    el("strong", {text: r.session ? `${short(r.id)} · an agent wants a session: ${r.session.title}`
                                  : `${short(r.id)} · ${r.requester} asks ${r.agent}`}),
    ...sessionLines(r),
    el("p", {class: "prompt", text: r.prompt}),
    r.retry_of ? el("p", {class: "hint", text: `Retry of ${r.retry_of}`}) : "",
    r.continuation_of ? el("p", {class: "hint", text: `↻ Background continuation of ${short(r.continuation_of)}`})
                      : "",
    el("p", {class: "left", "data-expires": r.expires_at, text: r.expires_at ? left(r.expires_at) : ""}),
    el("div", {class: "actions"},
       el("button", {class: "primary", type: "button", text: "Approve", onclick: () => act(r.id, "approve")}),
       el("button", {class: "danger", type: "button", text: "Deny", onclick: () => act(r.id, "deny")})))));
}

setInterval(() => {
  for (const node of document.querySelectorAll("[data-expires]")) node.textContent = left(node.dataset.expires);
  for (const node of document.querySelectorAll("[data-since]")) node.textContent = howLong(since(node.dataset.since));
}, 1000);

$("send").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("send-error").textContent = "";
  try {
    const made = await api("/api/requests", {agent: $("agent").value, prompt: $("prompt").value});
    $("prompt").value = "";
    requests = [made, ...requests.filter((r) => r.id !== made.id)];
    drawRequests();
    drawApprovals();
    say(`Sent as ${made.id}` + (made.state === "pending" ? ": it waits for the owner's approval." : "."));
  } catch (error) { $("send-error").textContent = error.message; }
});

async function act(id, action, body = {}) {
  try {
    await api(`/api/requests/${encodeURIComponent(id)}/${action}`, body);
    await refresh();
    if (current) await showCurrent();
  } catch (error) { say(error.message); }
}

// --- a request's or a task's page --------------------------------------------------------------------------

function route() {
  if (!me) return;
  const match = location.hash.match(/^#\/([rt])\/([RT][0-9-]+)$/);
  $("home").hidden = Boolean(match);
  $("request").hidden = !match;
  if (!match) { current = null; return; }
  current = {kind: match[1] === "r" ? "request" : "task", id: match[2], view: {end: 0, before: null, first: true}};
  $("console").replaceChildren();
  $("r-result").hidden = true;  // drawn once the console is read, to be compared with it
  $("earlier").hidden = true;
  $("jump").hidden = true;
  showCurrent().then(() => $("r-title").focus());
}
window.addEventListener("hashchange", route);

function showCurrent() { return current.kind === "request" ? showRequest() : showTask(); }

async function showRequest() {
  const open = current;
  let r, tasks;
  try {
    [r, tasks] = await Promise.all([api(`/api/requests/${open.id}`), api("/api/tasks")]);
  } catch (error) { $("r-error").textContent = error.message; return; }
  if (current !== open) return;
  open.request = r;
  open.live = !FINAL.has(r.state);
  $("r-title").textContent = visible(`${r.id} · ${r.agent}`);
  $("r-meta").replaceChildren(el("span", {class: `state ${r.state}`, text: stateOf(r)}), ...continuationBadge(r),
    visible(` asked by ${r.requester} at ${clock(r.created_at)}` + (r.retry_of ? ` · retry of ${r.retry_of}` : "") +
    (r.references.length ? ` · mentions ${r.references.join(", ")}` : "")));
  $("r-prompt").textContent = visible(r.prompt);
  $("r-progress").hidden = r.progress == null || FINAL.has(r.state);
  $("r-progress").value = r.progress || 0;
  $("r-question").hidden = !r.question;
  $("r-question-text").textContent = r.question ? visible(`${r.agent} asks: ${r.question.question}` +
    (r.question.options.length ? ` [${r.question.options.join(" / ")}]` : "")) : "";
  $("r-timeline-box").hidden = false;
  $("r-timeline").replaceChildren(...(r.timeline || []).map((entry) => el("li", {
    class: /interrupt|resum|slept/.test(entry.text) ? "gap" : ""}, el("time", {text: clock(entry.at)}), entry.text)));
  drawActions(r);
  const its = tasks.filter((t) => t.request_id === r.id && t.kind !== "request");
  $("r-tasks").replaceChildren(...its.map((t) => taskRow(t)));
  drawTaskHead(null);
  await follow(open);
  if (current === open) drawResult(r);
}

function drawResult(r) {
  // A failed request says why, in the console's font, and what the agent said only where the console below does
  // not already end with it (a shell command's result is its last lines).
  const failed = r.state === "failed";
  const result = plain(r.result || "");
  let text = result;
  if (failed) {
    const ended = (r.timeline || []).filter((entry) => entry.text.startsWith("failed")).pop();
    const why = ended ? ended.text : r.exit_code != null ? `failed: exit code ${r.exit_code}` : "failed";
    const said = result.trim() && result.trim() !== why.replace(/^failed: /, "").trim() && !consoleEndsWith(result);
    text = why.charAt(0).toUpperCase() + why.slice(1) + (said ? `\n\n${result}` : "");
  }
  $("r-result").hidden = !text;
  $("r-result").className = `result ${r.state}`;
  $("r-result").textContent = visible(text);
}

function consoleEndsWith(text) {
  const lines = (of) => of.split("\n").map((line) => line.split("\r").pop().trimEnd()).filter(Boolean);
  const wanted = lines(text);
  const shown = lines(Array.from($("console").children, (node) => node.textContent).join("\n")).slice(-wanted.length);
  return shown.length === wanted.length && shown.every((line, i) => line === wanted[i]);
}

async function showTask() {
  const open = current;
  let task;
  try { task = await api(`/api/tasks/${open.id}`); } catch (error) { $("r-error").textContent = error.message; return; }
  if (current !== open) return;
  open.live = task.state !== "ended";
  const name = firstLine(task.description || task.command);
  $("r-title").textContent = `${task.id} · ${name}`;
  drawTaskMeta(task);
  const said = task.description && name !== visible(task.description);  // the description, if the title cut it
  $("r-prompt").textContent = visible(said ? `${task.description}\n$ ${task.command}` : `$ ${task.command}`);
  for (const id of ["r-progress", "r-result", "r-question", "r-timeline-box"]) $(id).hidden = true;
  $("r-tasks").replaceChildren();
  $("r-actions").replaceChildren(...(task.state === "running" && me.owner ? [el("button", {type: "button",
    text: "Stop", onclick: async () => {
      try { await api(`/api/tasks/${task.id}/stop`, {}); await showTask(); } catch (error) { say(error.message); }
    }})] : []));
  drawTaskHead(task);
  await follow(open);
}

// --- background tasks: the home page's panel, a request's own, and a task's header ---------------------------

const ENDED = {completed: "✓", failed: "✘", stopped: "■"};  // how a task ended at a glance, as in the console window
const OUTCOME_COLOUR = {completed: "done", failed: "failed"};  // stopped and unknown: muted
const HIDDEN_TASKS = "coxswain.hidden-tasks";  // sessionStorage: the rows × took away, for this tab's life

function howLong(seconds) {  // how_long in durations.py: "4 s", "2 min 14 s", "1 h 05 min"
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor(whole % 3600 / 60)).padStart(2, "0")} min`;
}
function since(iso, until = Date.now()) { return (new Date(until) - new Date(iso)) / 1000; }
function took(t) {  // how long it ran; a running task's counts on by itself (data-since)
  const ended = t.state === "ended";
  return el("span", {class: "took", ...(ended ? {} : {"data-since": t.started_at}),
                     text: howLong(since(t.started_at, ended ? t.ended_at : Date.now()))});
}

const hiddenTasks = new Set((() => {
  try { return JSON.parse(sessionStorage.getItem(HIDDEN_TASKS) || "[]"); } catch { return []; }
})());

function hideTask(id, row) {  // the keyboard's focus goes on to the next row, or the panel's summary line
  const next = row.nextElementSibling || row.previousElementSibling;
  hiddenTasks.add(id);
  try { sessionStorage.setItem(HIDDEN_TASKS, JSON.stringify([...hiddenTasks])); } catch { /* this page only */ }
  drawTasks();
  const same = next && $("tasks").querySelector(`a[href="${next.querySelector("a").getAttribute("href")}"]`);
  (same || $("tasks-box").querySelector("summary")).focus();
}

function drawTasks() {
  const shown = tasks.filter((t) => t.kind !== "request" && !hiddenTasks.has(t.id));
  const running = shown.filter((t) => t.state !== "ended").length;
  const ended = shown.length - running;
  $("tasks").replaceChildren(...shown.map((t) => taskRow(t, true)));
  $("tasks-box").hidden = shown.length === 0;
  $("tasks-spinner").hidden = running === 0;
  $("tasks-summary").textContent = [running ? `${running} running` : "", ended ? `${ended} ended` : ""]
    .filter(Boolean).join(" · ");
}

function taskPill(t, header = false) {  // a row's says all in a word or two; the header names the exit code apart
  if (t.state !== "ended") {
    const word = !header ? t.status : t.state === "stopping" ? "Stopping…" : "running";
    return el("span", {class: "state running", text: word});
  }
  const word = !header ? t.status : t.outcome === "unknown" ? "result unknown" : t.outcome || "ended";
  return el("span", {class: `state ${OUTCOME_COLOUR[t.outcome] || "ended"}`, text: `${ENDED[t.outcome] || "?"} ${word}`,
                     ...(t.stop_reason ? {title: visible(t.stop_reason)} : {})});
}

function testChip(tests) {
  if (!tests) return "";
  return el("span", {class: tests.failed ? "chip failing" : "chip",
                     title: `${tests.runner}: ${tests.passed} passed, ${tests.failed} failed, ${tests.skipped} skipped`,
                     text: `✓ ${tests.passed}` + (tests.failed ? ` ✘ ${tests.failed}` : "")});
}

function taskRow(t, hideable = false) {
  const ended = t.state === "ended";
  const row = el("li", {class: ended ? "ended" : ""}, el("a", {href: `#/t/${t.id}`},
    el("div", {class: "line1"}, el("span", {class: "id", text: t.id}), taskPill(t),
       el("span", {class: "what", text: [t.agent, t.kind].filter(Boolean).join(" · ")}), testChip(t.tests), took(t)),
    el("div", {class: "what", text: firstLine(t.description || t.command)})));
  if (hideable && ended) {
    row.append(el("button", {type: "button", class: "hide", title: "Hide from this list", "aria-label":
      `Hide ${t.id} from this list`, text: "×", onclick: () => hideTask(t.id, row)}));
  }
  return row;
}

function drawTaskMeta(task) {  // a task console's header: its state, type, duration and exit code, then where from
  const facts = [el("span", {class: "kind", text: task.kind}), took(task)];
  if (task.state === "ended") {
    const code = task.exit_code != null ? `exit code ${task.exit_code}` : "no exit code";
    facts.push(el("span", {class: "exit", text: code}));
  }
  if (task.stop_reason) facts.push(el("span", {text: task.stop_reason}));
  facts.push(el("span", {text: `started at ${clock(task.started_at)}` + (task.agent ? ` by ${task.agent}` : "")},
                ...(task.request_id ? [" for ", el("a", {href: `#/r/${task.request_id}`, text: short(task.request_id)})]
                                    : [])));
  $("r-meta").replaceChildren(taskPill(task, true), " ", ...facts.flatMap((fact, i) => i ? [" · ", fact] : [fact]));
}

function drawActions(r) {
  const mine = r.requester === me.you;
  const buttons = [];
  if (me.owner && r.state === "pending") {
    buttons.push(el("button", {class: "primary", type: "button", text: "Approve", onclick: () => act(r.id, "approve")}),
                 el("button", {class: "danger", type: "button", text: "Deny", onclick: () => act(r.id, "deny")}));
  }
  if ((mine || me.owner) && !FINAL.has(r.state) && !r.cancel_requested) {
    buttons.push(el("button", {type: "button", text: "Cancel", onclick: () => act(r.id, "cancel")}));
  }
  if (mine && FINAL.has(r.state)) {
    buttons.push(el("button", {type: "button", text: "Retry", onclick: async () => {
      try { const made = await api(`/api/requests/${r.id}/retry`, {}); location.hash = `#/r/${made.id}`; }
      catch (error) { say(error.message); }
    }}));
  }
  $("r-actions").replaceChildren(...buttons);
}

$("answer-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current) return;
  await act(current.id, "answer", {text: $("answer").value});
  $("answer").value = "";
});

// --- the console: a request's own output (read on from an offset) or a task's (pages of lines) ---------------

function drawTaskHead(task) {
  const tests = task && task.tests;
  $("chip").hidden = !tests;
  if (tests) {
    $("chip").textContent = `✓ ${tests.passed}` + (tests.failed ? ` ✘ ${tests.failed}` : "");
    $("chip").title = `${tests.runner}: ${tests.passed} passed, ${tests.failed} failed, ${tests.skipped} skipped`;
    $("chip").classList.toggle("failing", tests.failed > 0);
  }
  $("console-status").textContent = task && task.quiet ? `no output for ${task.quiet_minutes} min` : "";
}

function consolePath(open) {
  return open.kind === "request" ? `/api/requests/${open.id}/console` : `/api/tasks/${open.id}/output`;
}

async function follow(open) {
  // The last page first, then what comes after it, once a second while the page is open; one read at a time, and
  // what comes back for a page no longer open is dropped.
  const view = open.view;
  if (view.busy) return;
  view.busy = true;
  try {
    if (view.first) {
      const page = await api(`${consolePath(open)}?styled=true&lines=${PAGE}`);
      if (current !== open) return;
      view.first = false;
      [view.before, view.end] = [page.before, page.end];
      $("earlier").hidden = page.before == null;
      append(page.styled, page.pending);
      if (page.note) append([[{text: page.note}]], page.pending, "note");
      return;
    }
    for (let more = true; more;) {
      const page = await api(`${consolePath(open)}?styled=true&lines=${PAGE}&after=${view.end}`);
      if (current !== open) return;
      if (page.older_not_loaded) append([[{text: "… output came faster than it can be shown; lines skipped"}]], "", "note");
      view.end = page.end;
      more = page.more;
      append(page.styled, page.pending);
    }
  } catch (error) { say(error.message); } finally { view.busy = false; }
}

function line(runs, extra) {
  const node = el("div", {class: extra || ""});
  for (const run of runs) {
    const span = el("span");
    span.textContent = run.text;  // the console pipeline's own text, not made visible here
    let [fg, bg] = [run.fg, run.bg];
    if (run.inverse) [fg, bg] = [bg || "var(--console-bg)", fg || "var(--console-fg)"];
    if (fg) span.style.color = fg;
    if (bg) span.style.background = bg;
    for (const [flag, name] of [["bold", "b"], ["faint", "f"], ["italic", "i"], ["underline", "u"]]) {
      if (run[flag]) span.classList.add(name);
    }
    node.append(span);
  }
  if (!runs.length) node.append("\u00a0");
  return node;
}

function atEnd(box) { return box.scrollHeight - box.scrollTop - box.clientHeight < 8; }

function append(lines, pending, extra) {
  // Whole lines go before the unfinished last one (a progress bar still being drawn), which is shown as it is now.
  const box = $("console");
  let last = box.querySelector(".pending");
  const shown = plain(pending || "");
  if (!lines.length && (last ? last.textContent : "") === shown) return;
  const following = atEnd(box);
  if (!last) { last = el("div", {class: "pending"}); box.append(last); }
  last.before(...lines.map((runs) => line(runs, extra)));
  last.textContent = shown;
  if (following) box.scrollTop = box.scrollHeight;
  $("jump").hidden = following;
}

$("console").addEventListener("scroll", () => { if (atEnd($("console"))) $("jump").hidden = true; });
$("jump").addEventListener("click", () => {
  $("console").scrollTop = $("console").scrollHeight;
  $("jump").hidden = true;
  $("console").focus();
});

$("earlier").addEventListener("click", async () => {
  const open = current;
  if (!open || open.view.before == null) return;
  const view = open.view;
  const page = await api(`${consolePath(open)}?styled=true&lines=${PAGE}&before=${view.before}`);
  if (current !== open) return;
  view.before = page.before;
  const box = $("console");
  const height = box.scrollHeight;
  box.prepend(...page.styled.map((runs) => line(runs)));
  if (page.older_not_loaded) box.prepend(line([{text: "… older output not loaded"}], "note"));
  box.scrollTop += box.scrollHeight - height;
  $("earlier").hidden = page.before == null || page.older_not_loaded;
});

setInterval(() => {  // what can still change is read once a second while its page is open
  if (current && current.live && !document.hidden) showCurrent();
}, 1000);

boot();
