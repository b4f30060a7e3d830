"use strict";
// Tabletop Referee dashboard: plain JS, no build step.
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, text) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
};
const SVG = "http://www.w3.org/2000/svg";
const svgEl = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
async function api(path, options = {}) {
  const response = await fetch(path, { headers: { "Content-Type": "application/json" }, ...options });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) throw new Error(body?.detail ? (typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail)) : response.statusText);
  return body;
}
const PALETTE = ["#3fb68b", "#4c9be8", "#e5a13a", "#d760a8", "#9c7de8", "#e5534b"];
// a player named after a colour (Shove's red and blue) is drawn in it
const NAMED = { red: "#e5534b", blue: "#4c9be8" };
const playerColour = (p, n) => NAMED[String(p).toLowerCase()] ?? PALETTE[n % PALETTE.length];
const fmtT = (t) => `${Math.floor(t / 60)}:${(t % 60).toFixed(1).padStart(4, "0")}`;

// ---------- views
document.querySelectorAll(".tab").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
function show(view) {
  document.querySelectorAll(".tab").forEach((b) => b.classList.toggle("active", b.dataset.view === view));
  document.querySelectorAll(".view").forEach((v) => v.classList.toggle("active", v.id === `view-${view}`));
  if (view === "replay") loadReplaySources();
}

// ---------- setup
let GAMES = [], SOURCES = null;
function settingInput(s, prefix) {
  const wrap = el("label");
  wrap.append(document.createTextNode(s.name.replaceAll("_", " ")));
  let input;
  if (s.type === "bool") {
    input = el("select"); ["true", "false"].forEach((v) => input.append(el("option", { value: v }, v)));
    input.value = String(s.default);
  } else if (s.type === "choice") {
    input = el("select"); s.choices.forEach((v) => input.append(el("option", { value: v }, v)));
    input.value = s.default;
  } else {
    input = el("input", { type: s.type === "text" ? "text" : "number", step: s.type === "float" ? "any" : "1" });
    input.value = s.default === null ? "" : s.default;
    if (s.default === null) input.placeholder = "game default";
  }
  input.dataset.setting = s.name; input.dataset.default = s.default === null ? "" : String(s.default);
  input.id = `${prefix}-${s.name}`;
  wrap.append(input);
  wrap.append(el("span", { class: "default" }, `default: ${s.default === null ? "one per player" : s.default}`));
  return wrap;
}
function readSettings(container, onlyChanged) {
  const out = {};
  container.querySelectorAll("[data-setting]").forEach((input) => {
    const v = input.value.trim();
    if (onlyChanged && v === input.dataset.default) return;
    if (v !== "") out[input.dataset.setting] = v;
  });
  return out;
}
function renderGame() {
  const game = GAMES.find((g) => g.name === $("game").value);
  const players = $("players"); players.innerHTML = "";
  const clip = SOURCES?.clips.find((c) => c.game === game.name);
  const names = clip?.players.length ? clip.players : game.default_players;
  const count = Math.max(...game.player_counts.filter((n) => n <= names.length), game.player_counts[0]);
  for (let n = 0; n < Math.max(count, names.length); n++) {
    const l = el("label", {}, `Seat ${n + 1}`);
    l.append(el("input", { class: "player", value: names[n] ?? `P${n + 1}` }));
    players.append(l);
  }
  players.append(el("p", { class: "note" }, `${game.title}: ${game.player_counts.join(" or ")} players, in seating order (clockwise).`));
  const settings = $("settings"); settings.innerHTML = "";
  game.settings.forEach((s) => settings.append(settingInput(s, "set")));
  const match = SOURCES?.clips.find((c) => c.game === game.name);
  if (match) $("source").value = `clip:${match.id}`;
  renderSource();
}
function renderSource() {
  const [kind, id] = $("source").value.split(/:(.*)/s);
  $("camera-row").classList.toggle("hidden", kind !== "camera");
  const cal = $("calibration"); cal.innerHTML = "";
  if (kind === "clip") cal.append(el("option", { value: "clip" }, "the clip's own calibration"));
  SOURCES.calibrations.forEach((c) => cal.append(el("option", { value: c }, c)));
  cal.append(el("option", { value: "" }, "none"));
  const clip = SOURCES.clips.find((c) => c.id === id);
  const mode = $("mode"); mode.innerHTML = "";
  if (SOURCES.vision_available) mode.append(el("option", { value: "vision" }, "camera pipeline"));
  if (kind === "clip" && clip?.has_observations || kind === "upload")
    mode.append(el("option", { value: "recorded" }, "replaying recorded observations"));
  $("mode-note").textContent = SOURCES.vision_available ? "" :
    "The camera pipeline is not installed yet: the referee replays the clip's recorded observations (ground truth) at their times, so its rulings are not what the camera saw.";
  if (kind !== "camera") $("cal-frame").src = `/api/sources/${kind}/${encodeURIComponent(id)}/frame.jpg`;
  else $("cal-frame").removeAttribute("src");
  clicks = []; drawClicks();  // points clicked on another source's frame mean nothing here
}
async function initSetup() {
  [GAMES, SOURCES] = await Promise.all([api("/api/games"), api("/api/sources")]);
  const game = $("game"); game.innerHTML = "";
  GAMES.forEach((g) => game.append(el("option", { value: g.name }, `${g.title} (${g.name})`)));
  const source = $("source"); source.innerHTML = "";
  SOURCES.clips.forEach((c) => source.append(el("option", { value: `clip:${c.id}` }, `sample clip: ${c.id}`)));
  SOURCES.uploads.forEach((u) => source.append(el("option", { value: `upload:${u}` }, `uploaded: ${u}`)));
  source.append(el("option", { value: "camera:0" }, "a camera"));
  game.onchange = renderGame; source.onchange = renderSource;
  renderGame();
}
$("upload").addEventListener("change", async (ev) => {
  const msg = $("upload-msg"); let video = null;
  for (const file of ev.target.files) {
    msg.textContent = `uploading ${file.name}…`;
    try {
      const r = await api(`/api/uploads?name=${encodeURIComponent(file.name)}`, {
        method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
      msg.textContent = `uploaded ${r.name} (${r.bytes} bytes)`;
      if (!r.name.endsWith(".jsonl")) video = r.name;
    } catch (e) { msg.textContent = `${file.name}: ${e.message}`; return; }
  }
  const keep = $("game").value;
  await initSetup(); $("game").value = keep; renderGame();
  if (video) { $("source").value = `upload:${video}`; renderSource(); }
  ev.target.value = "";
});
$("start").addEventListener("click", async () => {
  $("setup-error").textContent = "";
  let [kind, id] = $("source").value.split(/:(.*)/s);
  if (kind === "camera") id = String($("camera").value || 0);
  const body = {
    game: $("game").value, players: [...document.querySelectorAll("#players .player")].map((i) => i.value.trim()).filter(Boolean),
    settings: readSettings($("settings"), true), source: { kind, id },
    calibration: $("calibration").value || null, mode: $("mode").value || "recorded",
    speed: Number($("speed").value), record: $("record").checked,
  };
  try {
    const snap = await api("/api/session", { method: "POST", body: JSON.stringify(body) });
    applySnapshot(snap); show("live");
  } catch (e) { $("setup-error").textContent = e.message; }
});

// manual four-point calibration
let clicks = [];
$("cal-frame").addEventListener("click", (ev) => {
  if (clicks.length >= 4) return;
  const img = ev.target, r = img.getBoundingClientRect();
  clicks.push([(ev.clientX - r.left) * img.naturalWidth / r.width, (ev.clientY - r.top) * img.naturalHeight / r.height]);
  drawClicks();
});
function drawClicks() {
  const svg = $("cal-marks"), img = $("cal-frame"); svg.innerHTML = "";
  svg.setAttribute("viewBox", `0 0 ${img.naturalWidth || 960} ${img.naturalHeight || 540}`);
  clicks.forEach(([x, y], n) => {
    svg.append(svgEl("circle", { cx: x, cy: y, r: 7, fill: "none", stroke: "#3fb68b", "stroke-width": 3 }));
    const t = svgEl("text", { x: x + 10, y: y - 10, fill: "#3fb68b", "font-size": 22 }); t.textContent = n + 1; svg.append(t);
  });
  svg.style.pointerEvents = "none";
}
$("cal-reset").onclick = () => { clicks = []; drawClicks(); };
$("cal-save").onclick = async () => {
  const [kind, id] = $("source").value.split(/:(.*)/s);
  const card = $("cal-card").value.trim().toLowerCase().split("x").map(Number);
  if (card.length !== 2 || card.some((v) => !(v > 0))) {
    $("cal-msg").textContent = "Give the cards' size as WIDTHxLENGTH in mm, as 63x88.";
    return;
  }
  try {
    const r = await api("/api/calibrations/manual", { method: "POST", body: JSON.stringify({
      name: $("cal-name").value, source: { kind, id }, clicks, width_mm: Number($("cal-w").value),
      depth_mm: Number($("cal-d").value), game: $("game").value, card_mm: card }) });
    $("cal-msg").textContent = r.message; SOURCES = await api("/api/sources"); renderSource();
    $("calibration").value = `${$("cal-name").value}.json`;  // the one just made
  } catch (e) { $("cal-msg").textContent = e.message; }
};

// ---------- live
const live = { seq: 0, session: null, rulings: [], objects: [], t: 0, finished: false };
let socket = null, speakOn = false;
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${proto}://${location.host}/api/live/ws?since=${live.seq}`);
  socket.onopen = () => { $("conn").textContent = "live"; $("conn").classList.add("on"); };
  socket.onclose = () => { $("conn").textContent = "reconnecting"; $("conn").classList.remove("on"); setTimeout(connect, 1000); };
  socket.onmessage = (ev) => handle(JSON.parse(ev.data));
}
function handle(msg) {
  if (msg.kind !== "snapshot" && msg.seq <= live.seq) return;
  live.seq = msg.seq;
  const d = msg.data;
  switch (msg.kind) {
    case "snapshot": if (d.session) applySnapshot(d); break;
    case "session": live.session = d; live.rulings = []; live.objects = []; live.finished = false; $("feed").innerHTML = ""; renderSession(); renderAll(); break;
    case "recording": if (live.session) live.session.recording = d.id; renderSession(); break;
    case "frame": live.t = d.t; $("live-clock").textContent = `t ${fmtT(d.t)}`; $("live-fps").textContent = `${d.fps.toFixed(1)} frames/s`; break;
    case "table": live.objects = d.objects; renderMap(); renderHits(); break;
    case "ruling": live.rulings.push(d); addFeed(d, true); renderBoard(); speak(d.message); break;
    case "rulings": live.rulings = d.rulings; rebuildFeed(); renderBoard();
      addStatus(`Re-adjudicated: ${d.changed} ruling${d.changed === 1 ? "" : "s"} changed.`); break;
    case "status": addStatus(d.message, d.level); break;
    case "ended": live.finished = true; addStatus(`The clip has ended (${d.frames} frames).`); break;
  }
}
function applySnapshot(s) {
  // A snapshot older than the messages already shown (the start button's answer can come
  // after the socket's first messages) would take back rulings and the recording's name.
  if (live.session && s.seq < live.seq) return;
  live.seq = Math.max(live.seq, s.seq); live.session = s.session; live.rulings = s.rulings;
  live.objects = s.objects; live.t = s.t; live.finished = s.finished;
  renderSession(); rebuildFeed(); renderAll();
}
function renderSession() {
  const s = live.session; if (!s) return;
  $("live-source").textContent = `${s.game} · ${s.source}`;
  $("live-mode").textContent = s.mode_label;
  $("live-rec").textContent = s.recording ? `● recording ${s.recording}` : "";
  const sel = $("m-player"); sel.innerHTML = "";
  s.players.forEach((p) => sel.append(el("option", { value: p }, p)));
  // only the buttons of what this game understands (an oink means nothing in Shove)
  const game = GAMES.find((g) => g.name === s.game), known = game ? game.declares : null;
  document.querySelectorAll("[data-declare]").forEach((b) => b.classList.toggle("hidden", !!known && !known.includes(b.dataset.declare)));
  $("m-value").classList.toggle("hidden", !!known && !known.includes("die_roll"));
}
function renderAll() { renderMap(); renderHits(); renderBoard(); }
function feedItem(r, fresh) {
  const li = el("li", { class: fresh ? "fresh" : "" });
  li.append(el("span", { class: `k k-${r.kind}` }, r.kind.replace("_", " ")));
  li.append(el("span", { class: "msg" }, r.message));
  li.append(el("span", { class: "meta" }, `${fmtT(r.t)}${r.rule ? " · rule " + r.rule : ""}${r.player ? " · " + r.player : ""}`));
  return li;
}
function addFeed(r, fresh) { $("feed").prepend(feedItem(r, fresh)); }
function rebuildFeed() { $("feed").innerHTML = ""; live.rulings.forEach((r) => addFeed(r, false)); }
function addStatus(message, level = "info") {
  const li = el("li"); li.append(el("span", { class: "k k-status" }, level)); li.append(el("span", { class: "msg" }, message));
  $("feed").prepend(li);
}
function speak(text) {
  if (!speakOn || !("speechSynthesis" in window)) return;
  speechSynthesis.speak(new SpeechSynthesisUtterance(text));
}
$("speak").onchange = (e) => { speakOn = e.target.checked; };

// scoreboard derived from the rulings, the same way for every game
function standings(rulings, players) {
  const scores = {}, hands = {}, extra = {}, beds = {}; let turn = null; const series = [];
  players.forEach((p) => { scores[p] = 0; });
  let hasScores = false;
  for (const r of rulings) {
    if (r.scores) { Object.assign(scores, r.scores); hasScores = true; }
    if (r.kind === "round_score") { Object.assign(scores, r.total); hasScores = true; }
    if (r.kind === "bed_scored" && r.credited_to) { beds[r.credited_to] = (beds[r.credited_to] || 0) + 1; scores[r.credited_to] = beds[r.credited_to]; hasScores = true; }
    if (r.hand_counts) Object.assign(hands, r.hand_counts);
    if (r.player && r.extra_turns !== undefined) extra[r.player] = r.extra_turns;
    if (r.kind === "turn" && r.player) turn = r;
    if (r.scores || r.kind === "round_score" || r.kind === "bed_scored") series.push({ t: r.t, scores: { ...scores } });
  }
  return { scores, hands, extra, turn, series, hasScores };
}
function renderBoard() {
  const s = live.session; if (!s) return;
  const st = standings(live.rulings, s.players);
  const table = $("scoreboard"); table.innerHTML = "";
  const head = el("tr"); ["Player", st.hasScores || true ? (s.game === "shove-piecepack" ? "Beds" : "Score") : "", "Cards", "Extra turns"].forEach((h) => head.append(el("th", {}, h)));
  table.append(head);
  s.players.forEach((p, n) => {
    const tr = el("tr", { class: st.turn?.player === p ? "current" : "" });
    const name = el("td"); name.append(el("span", { style: `color:${playerColour(p, n)}` }, p));
    tr.append(name, el("td", { class: "num" }, String(st.scores[p] ?? 0)), el("td", { class: "num" }, st.hands[p] ?? "–"), el("td", { class: "num" }, st.extra[p] ?? "–"));
    table.append(tr);
  });
  const over = live.rulings.find((r) => r.kind === "game_over");
  $("turn").textContent = over ? `Game over: ${over.winner ?? "no winner"} wins` : st.turn ? st.turn.message : "";
  renderChart(st, s.players);
}
function renderChart(st, players) {
  const svg = $("chart"); svg.innerHTML = "";
  const W = 400, H = 200, P = 28; svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const points = [{ t: 0, scores: Object.fromEntries(players.map((p) => [p, 0])) }, ...st.series];
  if (points.length < 2) { const t = svgEl("text", { x: W / 2, y: H / 2, fill: "#8fa1b3", "text-anchor": "middle", "font-size": 12 }); t.textContent = "No score yet"; svg.append(t); return; }
  const tMax = Math.max(live.t, ...points.map((p) => p.t), 1);
  const vals = points.flatMap((p) => Object.values(p.scores)); const lo = Math.min(0, ...vals), hi = Math.max(1, ...vals);
  const x = (t) => P + (W - 2 * P) * t / tMax, y = (v) => H - P - (H - 2 * P) * (v - lo) / (hi - lo || 1);
  svg.append(svgEl("line", { x1: P, y1: y(0), x2: W - P, y2: y(0), stroke: "#2a3644" }));
  [lo, hi].forEach((v) => { const t = svgEl("text", { x: 4, y: y(v) + 4, fill: "#8fa1b3", "font-size": 10 }); t.textContent = v; svg.append(t); });
  players.forEach((p, n) => {
    let d = ""; let last = 0;
    points.forEach((pt, k) => { const v = pt.scores[p] ?? last; d += `${k ? "L" : "M"}${x(pt.t)},${y(last)} L${x(pt.t)},${y(v)} `; last = v; });
    d += `L${x(tMax)},${y(last)}`;
    svg.append(svgEl("path", { d, fill: "none", stroke: playerColour(p, n), "stroke-width": 2.5 }));
    const label = svgEl("text", { x: W - P + 2, y: y(last) + 4, fill: playerColour(p, n), "font-size": 11 }); label.textContent = p; svg.append(label);
  });
}

// top-down map (table millimetres, y up) and click-to-correct
function drawTable(svg, objects, boardLines, highlight, onClick) {
  svg.innerHTML = "";
  const pts = objects.flatMap((o) => o.outline_mm).concat(boardLines.flat());
  if (!pts.length) { svg.setAttribute("viewBox", "0 0 100 60"); const t = svgEl("text", { x: 50, y: 32, fill: "#9fc5b4", "text-anchor": "middle", "font-size": 5 }); t.textContent = "The table is empty"; svg.append(t); return; }
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  const pad = 20, x0 = Math.min(...xs) - pad, x1 = Math.max(...xs) + pad, y0 = Math.min(...ys) - pad, y1 = Math.max(...ys) + pad;
  svg.setAttribute("viewBox", `${x0} ${-y1} ${x1 - x0} ${y1 - y0}`);
  const g = svgEl("g", { transform: "scale(1,-1)" }); svg.append(g);
  boardLines.forEach(([a, b]) => g.append(svgEl("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: "#c8d6cf", "stroke-width": 1, opacity: .6 })));
  objects.forEach((o) => {
    const fill = o.kind === "card" ? "#f4f1e8" : o.kind === "coin" ? "#d9b45a" : o.label === "red" ? "#d64545" : "#3c7be0";
    const poly = svgEl("polygon", { points: o.outline_mm.map((p) => p.join(",")).join(" "), fill, stroke: o.uid === highlight ? "#ff4d4d" : "#222", "stroke-width": o.uid === highlight ? 3 : 1, opacity: .95 });
    if (onClick && o.kind === "card") { poly.style.cursor = "pointer"; poly.addEventListener("click", () => onClick(o)); }
    g.append(poly);
    if (o.kind !== "token") {
      const c = o.outline_mm.reduce((a, p) => [a[0] + p[0] / o.outline_mm.length, a[1] + p[1] / o.outline_mm.length], [0, 0]);
      const t = svgEl("text", { x: c[0], y: -c[1] + 5, transform: "scale(1,-1)", "text-anchor": "middle", "font-size": o.kind === "card" ? 16 : 9, fill: isRed(o.label) ? "#c0392b" : "#111", "font-weight": 700, "pointer-events": "none" });
      t.textContent = o.label; g.append(t);
    }
  });
}
const isRed = (code) => /^[2-9TJQKA][HD]$/.test(code);
function renderMap() { if (live.session) drawTable($("map"), live.objects, live.session.board_lines || [], null, openCorrect); }
function renderHits() {
  const svg = $("cam-hit"); svg.innerHTML = ""; svg.setAttribute("viewBox", "0 0 960 540");
  const img = $("cam"); if (img.naturalWidth) svg.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
  live.objects.filter((o) => o.kind === "card" && o.outline_px.length).forEach((o) => {
    const poly = svgEl("polygon", { points: o.outline_px.map((p) => p.join(",")).join(" "), "data-uid": o.uid, "data-label": o.label });
    poly.addEventListener("click", () => openCorrect(o)); svg.append(poly);
  });
}
let correcting = null;
function openCorrect(o) { correcting = o; $("c-old").textContent = o.label; $("c-card").value = ""; $("correct").classList.remove("hidden"); $("c-card").focus(); }
$("c-cancel").onclick = () => $("correct").classList.add("hidden");
$("c-ok").onclick = async () => {
  try { await api("/api/session/correct", { method: "POST", body: JSON.stringify({ uid: correcting.uid, card: $("c-card").value.trim().toUpperCase() }) }); $("correct").classList.add("hidden"); }
  catch (e) { addStatus(e.message, "error"); }
};
document.querySelectorAll("[data-declare]").forEach((b) => b.addEventListener("click", async () => {
  const what = b.dataset.declare, value = what === "die_roll" ? Number($("m-value").value) : null;
  if (what === "die_roll" && !(Number.isInteger(value) && value >= 1 && value <= 4)) {
    addStatus("Type the number the die shows (1 to 4), then press Die roll.", "error"); return;
  }
  try { await api("/api/session/declare", { method: "POST", body: JSON.stringify({ player: $("m-player").value || null, what, value }) }); }
  catch (e) { addStatus(e.message, "error"); }
}));
$("stop").onclick = async () => {
  await api("/api/session", { method: "DELETE" });
  // nothing runs any more: no buttons, no recording mark, no camera image to ask for
  const recorded = live.session?.recording;
  live.session = null; $("live-rec").textContent = "";
  document.querySelectorAll("[data-declare]").forEach((b) => b.classList.add("hidden"));
  $("m-value").classList.add("hidden");
  addStatus(recorded ? `Stopped; recording ${recorded} is under Dispute replay.` : "Stopped.");
};
// the camera image: ask for the next frame when the last one has arrived (never piles up)
function pollFrame() {
  const img = $("cam");
  if (!live.session || document.hidden || !document.getElementById("view-live").classList.contains("active")) { setTimeout(pollFrame, 300); return; }
  const next = new Image();
  next.onload = () => { img.src = next.src; setTimeout(pollFrame, 100); };  // 10 images a second (PREVIEW_FPS)
  next.onerror = () => setTimeout(pollFrame, 500);
  next.src = `/api/live/frame.jpg?n=${Date.now()}`;
}

// ---------- dispute replay
let dispute = null, selected = null, stepIndex = 0;
async function loadReplaySources() {
  const src = await api("/api/sources"); const sel = $("r-source"); const keep = sel.value; sel.innerHTML = "";
  src.recordings.forEach((r) => sel.append(el("option", { value: `rec-${r.id}`, "data-closed": r.closed }, `recording ${r.id} · ${r.game} · ${r.rulings} rulings${r.closed ? "" : " · recoverable"}`)));
  src.clips.filter((c) => c.has_observations).forEach((c) => sel.append(el("option", { value: `clip-${c.id}` }, `sample clip ${c.id} (recorded observations)`)));
  if (keep) sel.value = keep;
  const games = GAMES.length ? GAMES : await api("/api/games"); GAMES = games;
}
$("r-open").onclick = () => openDispute($("r-source").value);
$("r-recover").onclick = async () => { const id = dispute.id.replace(/^rec-/, ""); const r = await api(`/api/recordings/${id}/recover`, { method: "POST" }); $("r-label").textContent = r.message; $("r-recover").classList.add("hidden"); };
async function openDispute(rid) {
  dispute = await api(`/api/replay/${encodeURIComponent(rid)}`);
  const opt = [...$("r-source").options].find((o) => o.value === rid);
  $("r-recover").classList.toggle("hidden", !(opt && opt.dataset.closed === "false"));
  $("r-label").textContent = `${dispute.label} · ${dispute.players.join(", ")} · ${dispute.rulings.length} rulings · ${dispute.frames} frames`;
  const tl = $("timeline"); tl.querySelectorAll(".mark").forEach((m) => m.remove());
  const span = Math.max(dispute.frames - 1, 1);
  dispute.rulings.forEach((r) => {
    const m = el("button", { class: `mark ${r.kind}`, title: `${fmtT(r.t)} ${r.message}`, "data-n": r.n });
    m.style.left = `calc(10px + (100% - 20px) * ${r.i / span})`;
    m.onclick = () => selectRuling(r.n); tl.append(m);
  });
  $("f-slider").max = span;
  const game = GAMES.find((g) => g.name === dispute.game); const box = $("r-settings"); box.innerHTML = "";
  game.settings.forEach((s) => box.append(settingInput({ ...s, default: dispute.settings[s.name] ?? s.default }, "rs")));
  $("r-changes").innerHTML = "";
  // nothing of the last recording's ruling stays on screen
  selected = null; $("d-title").textContent = "Pick a ruling on the timeline";
  ["d-before", "d-after"].forEach((id) => $(id).removeAttribute("src"));
  $("d-before-cap").textContent = "before"; $("d-after-cap").textContent = "after";
  ["d-message", "d-rule", "d-evidence", "d-actions", "d-geom"].forEach((id) => { $(id).innerHTML = ""; });
  step(0);
}
async function selectRuling(n) {
  selected = n;
  document.querySelectorAll(".timeline .mark").forEach((m) => m.classList.toggle("sel", Number(m.dataset.n) === n));
  const d = await api(`/api/replay/${encodeURIComponent(dispute.id)}/rulings/${n}`);
  $("d-title").textContent = `Ruling ${n + 1} of ${dispute.rulings.length} · ${d.ruling.kind}${d.ruling.rule ? " · " + d.ruling.rule : ""} · ${fmtT(d.ruling.t)}`;
  $("d-before").src = `/api/replay/${encodeURIComponent(dispute.id)}/frames/${d.before}`;
  $("d-after").src = `/api/replay/${encodeURIComponent(dispute.id)}/frames/${d.after}`;
  $("d-before-cap").textContent = `before · frame ${d.before}`; $("d-after-cap").textContent = `after · frame ${d.after}`;
  $("d-message").textContent = d.ruling.message;
  $("d-rule").textContent = d.rule_text || "(no rule text for this kind of announcement)";
  renderEvidence(d); step(d.after);
  const card = d.observation?.card; const obj = d.objects.find((o) => o.label === card);
  drawTable($("d-geom"), d.objects, d.board_lines, obj?.uid);
  if (d.observation?.type === "coin_stopped") markCoin(d);
}
function renderEvidence(d) {
  const t = $("d-evidence"); t.innerHTML = ""; const ev = d.evidence || {};
  const row = (name, value, ok) => { const tr = el("tr"); tr.append(el("td", {}, name), el("td", { class: ok === undefined ? "" : ok ? "ok" : "no" }, value)); t.append(tr); };
  if (ev.overlaps_mm2) {
    const tol = ev.touch_tolerance_mm2 ?? d.settings.touch_tolerance_mm2;
    Object.entries(ev.overlaps_mm2).forEach(([card, area]) => row(`overlap with ${card}`, `${area} mm² ${area > tol ? ">" : "≤"} ${tol} mm² threshold`, area > tol));
  }
  if (ev.clearance_mm !== undefined) row("coin's clearance from the nearest line", `${ev.clearance_mm} mm (must be > 0, line half-width ${(d.settings.seam_mm ?? 2) / 2} mm)`, ev.clearance_mm > 0);
  if (ev.far_edge_mm !== undefined) row("coin's far edge vs line 1", `${ev.far_edge_mm} mm vs ${ev.line_1_mm} mm`, ev.far_edge_mm >= ev.line_1_mm);
  Object.entries(ev).filter(([k]) => !["overlaps_mm2", "touch_tolerance_mm2", "clearance_mm", "far_edge_mm", "line_1_mm"].includes(k))
    .forEach(([k, v]) => row(k.replaceAll("_", " "), JSON.stringify(v)));
  if (d.ruling.needed_actions !== undefined) row("actions needed / allowed", `${d.ruling.needed_actions} / ${d.ruling.allowed_actions}`, false);
  if (!t.children.length) row("evidence", "this ruling rests on the sequence of play, not on a measurement");
  const a = $("d-actions"); a.innerHTML = "";
  (d.actions || []).forEach((x) => a.append(el("li", {}, `${x.piece} ${x.do} ${JSON.stringify(x.from)} → ${x.to ? JSON.stringify(x.to) : "off the board"}${x.by ? " by " + JSON.stringify(x.by) : ""}`)));
}
function markCoin(d) {
  const svg = $("d-geom"); const g = svg.querySelector("g"); const [x, y] = d.observation.center;
  g.append(svgEl("circle", { cx: x, cy: y, r: d.observation.radius ?? 9.5, fill: "none", stroke: "#ff4d4d", "stroke-width": 2 }));
}
function step(index) {
  if (!dispute) return;
  stepIndex = Math.max(0, Math.min(index, dispute.frames - 1));
  $("f-slider").value = stepIndex; $("f-label").textContent = `frame ${stepIndex} · ${fmtT(stepIndex / dispute.fps)}`;
  $("f-img").src = `/api/replay/${encodeURIComponent(dispute.id)}/frames/${stepIndex}`;
}
$("f-prev").onclick = () => step(stepIndex - 1); $("f-next").onclick = () => step(stepIndex + 1);
$("f-slider").oninput = (e) => step(Number(e.target.value));
$("r-run").onclick = async () => {
  const out = $("r-changes");
  if (!dispute) { out.textContent = "Open a recording or a clip first."; return; }
  out.innerHTML = "working…";
  try {
    const r = await api(`/api/replay/${encodeURIComponent(dispute.id)}/readjudicate`, { method: "POST", body: JSON.stringify({ settings: readSettings($("r-settings"), false) }) });
    out.innerHTML = ""; out.append(el("p", {}, r.changes.length ? `${r.changes.length} ruling${r.changes.length === 1 ? "" : "s"} change:` : "No ruling changes with these settings."));
    const ol = el("ol", { class: "changes" });
    r.changes.forEach((c) => { const li = el("li"); li.append(el("b", {}, fmtT(c.t) + " "));
      if (c.before && c.after && c.before.message === c.after.message) {
        // The words stand; what changed is a field behind them (hand counts, scores).
        li.append(el("span", {}, c.before.message + " "));
        const keys = [...new Set([...Object.keys(c.before), ...Object.keys(c.after)])]
          .filter((k) => k !== "evidence" && JSON.stringify(c.before[k]) !== JSON.stringify(c.after[k]));
        const show = (v) => v && typeof v === "object" && !Array.isArray(v)
          ? Object.entries(v).map(([a, b]) => `${a} ${JSON.stringify(b)}`).join(", ")
          : JSON.stringify(v ?? null);
        keys.forEach((k) => { const f = el("span", { class: "field" }, `${k.replaceAll("_", " ")}: `);
          f.append(el("span", { class: "was" }, show(c.before[k])), " → ",
                   el("span", { class: "now" }, show(c.after[k])), " ");
          li.append(f); });
      } else {
        if (c.before) li.append(el("span", { class: "was" }, c.before.message + " "));
        if (c.after) li.append(el("span", { class: "now" }, c.after.message));
      }
      ol.append(li); });
    out.append(ol);
  } catch (e) { out.textContent = e.message; }
};

// ---------- start
// The running game's snapshot after the games are known (its buttons depend on them).
initSetup().catch((e) => { $("setup-error").textContent = e.message; })
  .then(() => api("/api/session")).then((s) => { applySnapshot(s); }).catch(() => {})
  .finally(() => { connect(); pollFrame(); });
