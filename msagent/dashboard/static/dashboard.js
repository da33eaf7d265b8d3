// msagent dashboard: fetches /api/runs/{id} and draws it; polls the run's stamp to follow it live.
"use strict";

const POLL_MS = 1500;
const ROLE_COLOURS = {main: "#1f77b4", main_exploiter: "#d62728", league_exploiter: "#2ca02c",
                      psro: "#9467bd"};
const PLOT_CONFIG = {responsive: true, displaylogo: false};
const WIN_RATE_SCALE = [[0, "#d73027"], [0.25, "#fc8d59"], [0.5, "#ffffbf"], [0.75, "#91cf60"],
                        [1, "#1a9850"]];  // red: the row loses, green: the row wins
const dashboard = window.dashboard = {ready: false, renders: 0, stamp: null, view: null,
                                      run: null, failures: 0};

const $ = (id) => document.getElementById(id);
const plotlyLoaded = new Promise((resolve, reject) => {
  if (window.Plotly) { resolve(); return; }
  $("plotly-js").addEventListener("load", resolve);
  $("plotly-js").addEventListener("error", () => reject(new Error("plotly.js did not load")));
});
const fmt = (x, digits = 0) => (x === null || x === undefined || Number.isNaN(x)) ? "–"
  : Number(x).toLocaleString("en", {maximumFractionDigits: digits,
                                    minimumFractionDigits: digits});
const colour = (role) => ROLE_COLOURS[role] || "#7f7f7f";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, {cache: "no-store"});
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

function say(text) {
  const box = $("message");
  box.hidden = !text;
  box.textContent = text || "";
}

async function loadRuns() {
  const listing = await getJSON("/api/runs");
  const select = $("run-select");
  const ids = listing.runs.map((r) => r.id);
  if (select.options.length !== ids.length || [...select.options].some((o, i) => o.value !== ids[i])) {
    select.replaceChildren(...listing.runs.map((r) => {
      const option = el("option", `${r.id}`);
      option.value = r.id;
      return option;
    }));
  }
  select.hidden = ids.length < 2;
  if (!ids.length) {
    say(listing.exists ? `No msagent run in ${listing.root} yet: waiting for \`msagent train\` to write one.`
                       : `${listing.root} does not exist (yet): waiting for a run to appear there.`);
    return null;
  }
  const wanted = decodeURIComponent(location.hash.slice(1));
  const run = ids.includes(wanted) ? wanted : (ids.includes(dashboard.run) ? dashboard.run : ids[ids.length - 1]);
  select.value = run;
  return run;
}

async function tick() {
  try {
    const run = await loadRuns();
    if (run === null) { dashboard.ready = true; return; }
    if (run !== dashboard.run) { dashboard.run = run; dashboard.stamp = null; }
    const {stamp} = await getJSON(`/api/runs/${encodeURIComponent(run)}/stamp`);
    if (stamp !== dashboard.stamp) {
      const view = await getJSON(`/api/runs/${encodeURIComponent(run)}`);
      dashboard.stamp = stamp;
      await render(view);
    }
    dashboard.failures = 0;
    liveLabel();
  } catch (error) {
    dashboard.failures += 1;
    $("live").textContent = `cannot reach the dashboard server (${error.message})`;
    $("live").className = "stale";
  } finally {
    setTimeout(tick, POLL_MS);
  }
}

function liveLabel() {
  const written = dashboard.view && dashboard.view.facts.written_s;
  const live = $("live");
  if (!written) { live.textContent = "no live feed (read from the newest checkpoint)"; return; }
  const age = Date.now() / 1000 - written;
  live.textContent = `written ${new Date(written * 1000).toLocaleTimeString()} (${fmt(age)} s ago)`;
  live.className = age > 30 ? "stale" : "";
}

async function render(view) {
  dashboard.view = view;
  say("");
  const timings = dashboard.timings = {};
  const timed = (name, draw, data) => {
    const start = performance.now();
    draw(data);
    timings[name] = performance.now() - start;
  };
  timed("warnings", renderWarnings, view.warnings);
  timed("facts", renderFacts, view.facts);
  timed("ladder", renderLadder, view.ladder);
  timed("matches", renderMatches, view.matches);
  $("config").textContent = view.facts.config || "(no config.toml)";
  dashboard.firstContentAt = dashboard.firstContentAt || performance.now();
  await plotlyLoaded;
  dashboard.plotlyAt = dashboard.plotlyAt || performance.now();
  timed("payoff", renderPayoff, view.payoff);
  timed("timeline", renderTimeline, view.timeline);
  timed("lineage", renderLineage, view.lineage);
  timed("psro", renderPSRO, view.psro);
  timed("exploits", renderExploits, view.exploits);
  dashboard.renders += 1;
  dashboard.ready = true;
}

function renderWarnings(warnings) {
  const list = $("warnings");
  list.hidden = !warnings.length;
  list.replaceChildren(...warnings.map((w) => el("li", w)));
}

function renderFacts(f) {
  const p = f.progress || {};
  const hosts = (name) => [...new Set(((f.placements || {})[name] || []).map((p) => p.ip))];
  const services = Object.entries(f.services || {}).map(([name, ids]) => {
    const on = hosts(name);
    return `${name} ×${ids.length}${on.length ? ` on ${on.join(", ")}` : ""}`;
  });
  $("headline").textContent = `${f.name} · ${f.kind}`;
  const items = [
    ["run", f.name], ["kind", f.kind], ["created", f.created], ["env steps", fmt(p.env_steps)],
    ["steps/s", fmt(p.steps_per_s)], ["episodes", fmt(p.episodes)], ["updates", fmt(p.updates)],
    ["elapsed", p.elapsed_s === undefined ? "–" : `${fmt(p.elapsed_s / 60, 1)} min`],
    ["newest checkpoint", f.checkpoint === null || f.checkpoint === undefined ? "–" : f.checkpoint],
    ["checkpoints kept", (f.checkpoints || []).join(", ") || "–"],
    ["services", services.join(", ") || "–"],
    ["replacements", (f.replacements || []).map((r) => `${r.dead} → ${r.new || "?"} (${r.cause})`).join("; ") || "none"],
    ["source", f.source], ["written by", f.msagent ? `msagent ${f.msagent} (feed format ${f.format})` : "–"],
  ];
  for (const [name, value] of Object.entries(p.user || {})) items.push([`user/${name}`, fmt(value, 4)]);
  if (f.game) items.splice(2, 0, ["game", f.game]);
  if (p.iterations !== undefined) items.splice(3, 0, ["iterations", fmt(p.iterations)]);
  $("facts").replaceChildren(...items.map(([k, v]) => {
    const div = el("div"); div.append(el("b", k), el("span", v ?? "–")); return div;
  }));
}

function mixtureCell(weights) {
  // a participant's weight in the league's mixture, per seat ("–" outside it)
  if (!weights || !weights.some((w) => w > 0)) return "–";
  return weights.map((w) => `${fmt(100 * w, 0)} %`).join(" · ");
}

function renderLadder(rows) {
  $("ladder-section").hidden = !rows;
  if (!rows) return;
  $("ladder-count").textContent = `${rows.length} participants, best Elo first`;
  $("ladder").tBodies[0].replaceChildren(...rows.map((r, i) => {
    const tr = el("tr", null, r.kind);
    tr.dataset.id = r.id;
    const skill = r.mu === null ? "–" : `${fmt(r.mu, 2)} ± ${fmt(r.sigma, 2)}`;
    const role = r.role ? r.role + (r.resets ? ` (${r.resets} resets)` : "") : "–";
    for (const cell of [i + 1, r.id, r.kind, role, fmt(r.elo), skill, fmt(r.games, 1),
                        r.win_rate === null ? "–" : `${fmt(100 * r.win_rate, 1)} %`, r.parent || "–",
                        r.network || "–", mixtureCell(r.mixture)]) {
      tr.append(el("td", cell));
    }
    tr.children[4].dataset.elo = r.elo;
    return tr;
  }));
}

function renderPayoff(payoff) {
  $("payoff-section").hidden = !payoff || !payoff.ids.length;
  if (!payoff || !payoff.ids.length) return;
  let order = payoff.ids.map((_, i) => i);
  if ($("payoff-order").value === "name") {
    const ids0 = payoff.ids;
    order = order.slice().sort((a, b) => (ids0[a] < ids0[b] ? -1 : ids0[a] > ids0[b] ? 1 : 0));
  }
  const ids = order.map((i) => payoff.ids[i]);
  const pick = (m) => order.map((i) => order.map((j) => m[i][j]));
  const rate = pick(payoff.rate), games = pick(payoff.games);
  const trusted = rate.map((row, i) => row.map((v, j) => games[i][j] >= payoff.min_games ? v : null));
  const hover = "%{y} vs %{x}<br>win rate %{z:.3f}<br>games %{customdata:.1f}<extra></extra>";
  const big = ids.length > 60;  // hundreds of tick labels cost more than the cells; hover names them
  const axis = {type: "category", automargin: true, showticklabels: !big, tickfont: {size: 11},
                showgrid: false};
  // one trace; the grey background shows through the empty cells (fewer games than the minimum)
  Plotly.react("heatmap", [
    {type: "heatmap", name: "win rate", x: ids, y: ids, z: trusted, zmin: 0, zmax: 1,
     colorscale: WIN_RATE_SCALE, customdata: games, hovertemplate: hover, hoverongaps: true,
     xgap: big ? 0 : 1, ygap: big ? 0 : 1, colorbar: {title: {text: "win rate"}}},
  ], {margin: {t: 10}, plot_bgcolor: "#c8ccd2",
      xaxis: {...axis, title: {text: big ? "opponent (hover a cell for names)" : "opponent"}},
      yaxis: {...axis, autorange: "reversed", title: {text: "player"}}}, PLOT_CONFIG);
}

function renderTimeline(tl) {
  const minutes = tl ? tl.t.map((t) => t / 60) : [];
  $("timeline-section").hidden = !minutes.length;
  if (!minutes.length) return;
  const line = (name, y) => ({type: "scatter", mode: "lines", name, x: minutes, y});
  const elo = Object.entries(tl.elo).map(([pid, y]) => line(pid, y));
  const ratingsData = elo.length ? elo : [line("mean return", tl.mean_return)];
  Plotly.react("ratings-chart", ratingsData, {
    title: {text: elo.length ? "Elo over time" : "mean return over time"}, margin: {t: 40},
    xaxis: {title: {text: "minutes"}}, legend: {orientation: "h", y: -0.3}}, PLOT_CONFIG);
  const evals = Object.entries(tl.eval).map(([label, y]) => line(`vs ${label}`, y));
  // NashConv (small OpenSpiel games): beside the win rates on a right-hand axis, else alone
  const nash = Object.entries(tl.nash_conv || {}).map(([pid, y]) => (
    {...line(`NashConv ${pid}`, y), connectgaps: true, yaxis: evals.length ? "y2" : "y"}));
  const shown = [...evals, ...nash];
  const title = evals.length ? "evaluated player's win rates against fixed opponents"
    : nash.length ? "evaluated player's NashConv" : "env steps/s";
  Plotly.react("eval-chart", shown.length ? shown : [line("env steps/s", tl.steps_per_s)], {
    title: {text: title}, margin: {t: 40},
    xaxis: {title: {text: "minutes"}}, yaxis: evals.length ? {range: [0, 1]} : {rangemode: "tozero"},
    ...(evals.length && nash.length ? {yaxis2: {overlaying: "y", side: "right", rangemode: "tozero",
                                                title: {text: "NashConv"}}} : {}),
    legend: {orientation: "h", y: -0.3}}, PLOT_CONFIG);
}

function lineageLayout(lineage) {
  const owners = [...new Set(lineage.nodes.map((n) => n.owner))];
  const times = lineage.nodes.filter((n) => n.created_s !== null).map((n) => n.created_s);
  const t0 = times.length ? Math.min(...times) : 0;
  const tEnd = times.length ? (Math.max(...times) - t0) / 60 : 0;
  const pos = {};
  for (const n of lineage.nodes) {
    pos[n.id] = [n.created_s === null ? tEnd * 1.03 + 0.1 : (n.created_s - t0) / 60, owners.indexOf(n.owner)];
  }
  return {owners, pos};
}

function renderLineage(lineage) {
  $("lineage-section").hidden = !lineage || !lineage.nodes.length;
  if (!lineage || !lineage.nodes.length) return;
  const {owners, pos} = lineageLayout(lineage);
  const segments = (reset) => {
    const x = [], y = [], edges = [];
    for (const e of lineage.edges.filter((e) => e.reset === reset)) {
      const [a, b] = [pos[e.parent], pos[e.child]];
      if (!a || !b) continue;
      x.push(a[0], b[0], null); y.push(a[1], b[1], null); edges.push([e.parent, e.child]);
    }
    return {type: "scatter", mode: "lines", x, y, hoverinfo: "skip", meta: {edges},
            name: reset ? "reset" : "continued from",
            line: reset ? {color: "#d62728", dash: "dash", width: 1.5} : {color: "#b0b6bf", width: 1}};
  };
  const roles = [...new Set(lineage.nodes.map((n) => n.role))];
  const nodes = roles.map((role) => {
    const ns = lineage.nodes.filter((n) => n.role === role);
    return {type: "scatter", mode: "markers", name: role, x: ns.map((n) => pos[n.id][0]),
            y: ns.map((n) => pos[n.id][1]), text: ns.map((n) => `${n.id}${n.training ? " (training)" : ""}<br>parent: ${n.parent || "none"}`),
            hovertemplate: "%{text}<extra></extra>",
            marker: {color: colour(role), size: ns.map((n) => n.training ? 14 : 7),
                     symbol: ns.map((n) => n.training ? "star" : "circle")}};
  });
  Plotly.react("lineage", [segments(false), segments(true), ...nodes], {
    margin: {t: 10}, xaxis: {title: {text: "minutes since the first snapshot (stars: training now)"}},
    yaxis: {tickvals: owners.map((_, i) => i), ticktext: owners, automargin: true},
    legend: {orientation: "h", y: 1.08}}, PLOT_CONFIG);
}

function renderPSRO(psro) {
  $("psro-section").hidden = !psro;
  if (!psro) return;
  const positive = psro.nash_conv.every((v) => v === null || v > 0);
  Plotly.react("nashconv-chart", [{type: "scatter", mode: "lines+markers", name: "NashConv",
                                   x: psro.iterations, y: psro.nash_conv}],
               {title: {text: "NashConv per iteration"}, margin: {t: 40},
                xaxis: {title: {text: "iteration"}},
                yaxis: {type: positive ? "log" : "linear"}}, PLOT_CONFIG);
  const box = $("meta-charts");
  while (box.children.length > psro.populations.length) box.lastChild.remove();
  psro.populations.forEach((population, k) => {
    if (!box.children[k]) box.append(el("div"));
    const traces = population.members.map((member, i) => ({
      type: "bar", name: member, x: psro.iterations, y: population.weights[i],
      hovertemplate: `${member}<br>iteration %{x}: %{y:.3f}<extra></extra>`}));
    const who = psro.symmetric ? "" : ` (player ${k})`;
    Plotly.react(box.children[k], traces, {
      barmode: "stack", showlegend: population.members.length <= 12, margin: {t: 40},
      title: {text: `meta-strategy per iteration${who}`}, xaxis: {title: {text: "iteration"}},
      yaxis: {range: [0, 1]}}, PLOT_CONFIG);
  });
}

function renderMatches(matches) {
  $("matches-section").hidden = !matches;
  if (!matches) return;
  $("matches-count").textContent = `${fmt(matches.reported)} reported`;
  $("matches").tBodies[0].replaceChildren(...matches.newest.map((m) => {
    const tr = el("tr");
    for (const cell of [new Date(m.time * 1000).toLocaleTimeString(), (m.seats || []).join(" vs "),
                        m.learner_seat, m.outcome, m.length, m.version]) tr.append(el("td", cell));
    return tr;
  }));
}

function renderExploits(rows) {
  $("exploits-section").hidden = !rows;
  if (!rows) return;
  const num = (v, d = 4) => (v === null || v === undefined ? "–" : v.toFixed(d));
  $("exploits").tBodies[0].replaceChildren(...rows.slice().reverse().map((r) => {
    const tr = el("tr");
    for (const cell of [new Date(r.time * 1000).toLocaleString(), r.policy, r.step, r.budget,
                        num(r.mean_return), `[${num(r.return_interval[0])}, ${num(r.return_interval[1])}]`,
                        num(r.win_rate, 3), num(r.exact)]) tr.append(el("td", cell));
    return tr;
  }));
  const byPolicy = {};
  for (const r of rows) (byPolicy[r.policy] = byPolicy[r.policy] || []).push(r);
  const traces = Object.entries(byPolicy).map(([policy, rs]) => ({
    type: "scatter", mode: "lines+markers", name: policy,
    x: rs.map((r) => new Date(r.time * 1000)), y: rs.map((r) => r.mean_return),
    error_y: {type: "data", symmetric: false,
              array: rs.map((r) => r.return_interval[1] - r.mean_return),
              arrayminus: rs.map((r) => r.mean_return - r.return_interval[0])}}));
  Plotly.react("exploits-chart", traces, {
    title: {text: "best response's mean return per game (a lower bound on exploitability)"},
    margin: {t: 40}, legend: {orientation: "h", y: -0.3}}, PLOT_CONFIG);
}

$("run-select").addEventListener("change", (e) => { location.hash = encodeURIComponent(e.target.value); });
$("payoff-order").addEventListener("change", () => dashboard.view && renderPayoff(dashboard.view.payoff));
window.addEventListener("hashchange", () => { dashboard.stamp = null; });
tick();
