/// <reference lib="dom" />
/**
 * The review page (`GET /review`): shadow summaries beside the published one, every must-preserve
 * item with its evidence as the gate judged it, the differences, the gate report, a claim's
 * lineage, approve and reject. One static page and one script, no framework: the script below is
 * a single self-contained function that the bundler compiles with the rest and the server sends
 * as `/review/app.js` (it references nothing outside itself). It reads only the public API, sends
 * the token the reviewer types (kept for the tab only), and puts every piece of memory text into
 * the page as text, never as markup: memory is untrusted input.
 */

export const REVIEW_HEADERS: Record<string, string> = {
  // Defence in depth: even a mistake in escaping could not run an injected script.
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export const REVIEW_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>memgate review</title>
<link rel="stylesheet" href="/review/app.css">
<script type="module" src="/review/app.js"></script>
</head>
<body>
<header>
  <h1>memgate review</h1>
  <form id="token-form" aria-label="API token">
    <label for="token">Token</label>
    <input id="token" name="token" type="password" autocomplete="off" placeholder="bearer token or JWT">
    <button type="submit">Use</button>
  </form>
</header>
<main>
  <nav aria-label="Subjects"><h2>Subjects</h2><ul id="subjects"></ul></nav>
  <section id="detail" aria-live="polite"><p>Choose a subject.</p></section>
</main>
<p id="status" role="status" aria-live="polite"></p>
</body>
</html>
`;

export const REVIEW_STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de;
  --accent: #0a58ca; --ok: #1a7f37; --bad: #b42318; --card: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3;
  --line: #30363d; --accent: #6cb6ff; --ok: #56d364; --bad: #ff7b72; --card: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between;
  padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.25rem; margin: 0; } h2 { font-size: 1.1rem; } h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
form { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
input { min-width: 0; flex: 1 1 8rem; }
input, button { font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line);
  border-radius: 6px; padding: .35rem .6rem; min-height: 2.25rem; }
button { cursor: pointer; } button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
button.link { background: none; border: none; color: var(--accent); text-decoration: underline; padding: 0; min-height: 0; text-align: left; vertical-align: top; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
main { display: grid; grid-template-columns: minmax(12rem, 18rem) minmax(0, 1fr); gap: 1rem; padding: 1rem; }
@media (max-width: 700px) { main { grid-template-columns: 1fr; padding: .5rem; } }
nav ul { list-style: none; margin: 0; padding: 0; } nav li { margin: .25rem 0; }
nav button { width: 100%; text-align: left; overflow-wrap: anywhere; }
.badge { display: inline-block; font-size: .8rem; padding: 0 .4rem; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(16rem, 100%), 1fr)); gap: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .75rem; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; font-size: .9rem; display: block; overflow-x: auto; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem; text-align: left; vertical-align: top; }
.kept { color: var(--ok); } .lost { color: var(--bad); font-weight: 600; }
.muted { color: var(--muted); } .refused { color: var(--bad); font-weight: 600; }
ul.plain { padding-left: 1.1rem; margin: .25rem 0; } code { overflow-wrap: anywhere; }
#status { padding: 0 1rem; min-height: 1.5rem; }
`;

/**
 * The page's script: rendered with DOM nodes and text only. Everything it needs is inside this
 * function, so its compiled source is the script the server sends.
 */
function reviewApp(): void {
  type Json = Record<string, unknown>;
  const TOKEN_KEY = "memgate-review-token";
  let token = sessionStorage.getItem(TOKEN_KEY) ?? "";

  function el(
    tag: string,
    attributes: Record<string, string> = {},
    ...children: Array<Node | string | null>
  ) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    for (const child of children)
      if (child !== null) node.append(typeof child === "string" ? document.createTextNode(child) : child);
    return node;
  }
  function button(label: string, onClick: () => void, className = "") {
    const node = el("button", { type: "button", ...(className ? { class: className } : {}) }, label);
    node.addEventListener("click", onClick);
    return node;
  }
  const status = document.getElementById("status") as HTMLElement;
  const detail = document.getElementById("detail") as HTMLElement;
  const say = (message: string, refused = false) => {
    status.textContent = message;
    status.className = refused ? "refused" : "";
  };

  async function api(method: string, path: string): Promise<Json> {
    const response = await fetch(path, {
      method,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    const body = (await response.json().catch(() => null)) as Json | null;
    if (!response.ok) {
      const error = (body?.error ?? {}) as Json;
      throw new Error(`${response.status}: ${String(error.message ?? response.statusText)}`);
    }
    return body ?? {};
  }
  const path = (...segments: string[]) =>
    segments.map((s, i) => (i % 2 === 1 ? encodeURIComponent(s) : s)).join("/");
  const valueText = (value: unknown) => {
    const v = (value ?? {}) as Json;
    if ("quantity" in v) return `${String(v.quantity)}${v.unit ? ` ${String(v.unit)}` : ""}`;
    for (const kind of ["text", "bool", "date", "entity"]) if (kind in v) return String(v[kind]);
    if ("scopes" in v) return (v.scopes as unknown[]).map(String).join(", ");
    return JSON.stringify(value);
  };
  const claimText = (claim: Json) =>
    `${String(claim.key)}${claim.scope && claim.scope !== "global" ? ` @ ${String(claim.scope)}` : ""} = ${valueText(claim.value)}${claim.polarity === "negated" ? " (negated)" : ""}${claim.status === "contested" ? " [contested]" : ""}${claim.status === "earlier" ? ` [earlier reading${claim.asOf ? `, ${String(claim.asOf)}` : ""}]` : ""}`;

  /** The inputs' earlier readings: valid, shown, never served as current. */
  function earlierReadings(readings: Json[]) {
    return el(
      "div",
      {},
      el("h3", {}, "Earlier readings (a later reading holds; never served as current)"),
      el(
        "ul",
        { class: "plain" },
        ...readings.map((r) =>
          el(
            "li",
            {},
            el("code", {}, String(r.eventId)),
            ` ${String(r.key)}${r.scope !== "global" ? ` @ ${String(r.scope)}` : ""} = ${String(r.reading)}${r.occurredAt ? `, read ${String(r.occurredAt)}` : ""}; now `,
            el("code", {}, String(r.latest)),
            `: ${String(r.holds)}`,
          ),
        ),
      ),
    );
  }
  const claimIdentity = (claim: Json) => `${String(claim.key)}\u0000${String(claim.scope ?? "global")}`;

  function eventLine(event: Json) {
    return el(
      "li",
      {},
      el("code", {}, String(event.eventId)),
      ` [${String(event.kind)}, trust ${String(event.trust)}${event.source ? `, source ${String(event.source)}` : ""}] `,
      String(event.text ?? ""),
    );
  }

  async function showLineage(artifactId: string, claim: Json, into: HTMLElement) {
    try {
      const explained = await api(
        "GET",
        `${path("/v1/artifacts", artifactId)}/claims?key=${encodeURIComponent(String(claim.key))}`,
      );
      const entries = (explained.claims as Json[]).filter(
        (c) => claimIdentity(c.claim as Json) === claimIdentity(claim),
      );
      into.replaceChildren(
        el(
          "p",
          { class: "muted" },
          `Derived by ${String(explained.model)} (prompt ${String(explained.prompt)}) in ${artifactId} from:`,
        ),
        el(
          "ul",
          { class: "plain" },
          ...entries.flatMap((entry) => (entry.evidence as Json[]).map(eventLine)),
        ),
      );
    } catch (error) {
      into.replaceChildren(el("p", { class: "refused" }, String((error as Error).message)));
    }
  }

  function summaryCard(title: string, artifactId: string | null, body: Json | null) {
    const card = el("div", { class: "card" }, el("h3", {}, title));
    if (!artifactId || !body) {
      card.append(el("p", { class: "muted" }, "none"));
      return card;
    }
    card.append(el("p", { class: "muted" }, el("code", {}, artifactId)));
    if (body.summary) card.append(el("p", {}, String(body.summary)));
    const claims = el("ul", { class: "plain" });
    for (const claim of (body.claims ?? []) as Json[]) {
      const lineage = el("div", {});
      const item = el(
        "li",
        {},
        button(claimText(claim), () => void showLineage(artifactId, claim, lineage), "link"),
        lineage,
      );
      claims.append(item);
    }
    card.append(el("h3", {}, "Claims (select one for its lineage)"), claims);
    const pending = (body.pending ?? []) as Json[];
    if (pending.length > 0)
      card.append(
        el("h3", {}, "Pending"),
        el("ul", { class: "plain" }, ...pending.map((p) => el("li", {}, String(p.text)))),
      );
    const conflicts = (body.unresolvedConflicts ?? []) as Json[];
    if (conflicts.length > 0)
      card.append(
        el("h3", {}, "Unresolved conflicts"),
        el(
          "ul",
          { class: "plain" },
          ...conflicts.map((c) => el("li", {}, `${String(c.key)}: ${(c.members as string[]).join(" vs ")}`)),
        ),
      );
    return card;
  }

  function differences(published: Json | null, shadow: Json) {
    const before = new Map(((published?.claims ?? []) as Json[]).map((c) => [claimIdentity(c), c]));
    const after = new Map(((shadow.claims ?? []) as Json[]).map((c) => [claimIdentity(c), c]));
    const list = el("ul", { class: "plain" });
    for (const [id, claim] of after) {
      const old = before.get(id);
      if (!old) list.append(el("li", {}, `added: ${claimText(claim)}`));
      else if (claimText(old) !== claimText(claim))
        list.append(el("li", {}, `changed: ${claimText(old)} → ${claimText(claim)}`));
    }
    for (const [id, claim] of before)
      if (!after.has(id)) list.append(el("li", {}, `removed: ${claimText(claim)}`));
    if (list.childElementCount === 0) list.append(el("li", { class: "muted" }, "no claim changed"));
    return list;
  }

  function checklistTable(lines: Json[]) {
    const rows = lines.map((line) =>
      el(
        "tr",
        {},
        el("td", {}, String(line.item)),
        el("td", { class: line.keptBy ? "kept" : "lost" }, line.keptBy ? String(line.keptBy) : "NOT KEPT"),
        el("td", {}, el("ul", { class: "plain" }, ...((line.evidenceEvents ?? []) as Json[]).map(eventLine))),
      ),
    );
    return el(
      "table",
      {},
      el("caption", { class: "muted" }, "Must-preserve items, as the gate judged them"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "Item"),
          el("th", { scope: "col" }, "Kept by"),
          el("th", { scope: "col" }, "Evidence"),
        ),
      ),
      el("tbody", {}, ...rows),
    );
  }

  function gateReport(record: Json) {
    const gate = (record.gate ?? {}) as Json;
    const reasons = (gate.reasons ?? []) as Json[];
    return el(
      "div",
      {},
      el("p", {}, `Gate verdict: ${String(gate.verdict)} (${reasons.length} reasons)`),
      el(
        "ul",
        { class: "plain" },
        ...reasons.map((r) => el("li", {}, `${String(r.code)}: ${String(r.detail)}`)),
      ),
    );
  }

  async function decide(action: "approve" | "reject", artifactId: string, subject: string) {
    try {
      await api("POST", `${path("/v1/artifacts", artifactId)}/${action}`);
      say(`${artifactId}: ${action === "approve" ? "published" : "rejected"}`);
      await showSubject(subject);
      await loadSubjects();
    } catch (error) {
      say(`${action} refused: ${(error as Error).message}`, true);
    }
  }

  async function showSubject(subject: string) {
    location.hash = encodeURIComponent(subject);
    detail.replaceChildren(el("p", {}, `Loading ${subject}…`));
    try {
      const reviewed = await api("GET", `${path("/v1/subjects", subject)}/review`);
      const current = reviewed.current as Json;
      const publishedId = current.mode === "summary" ? String(current.artifactId) : null;
      const published = publishedId
        ? ((await api("GET", path("/v1/artifacts", publishedId))).body as Json)
        : null;
      const parts: Node[] = [
        el("h2", {}, subject),
        el(
          "p",
          {},
          current.mode === "summary"
            ? `Recall serves ${String(current.artifactId)}`
            : `Recall serves raw events: ${String(current.reason)}`,
        ),
      ];
      const shadows = (reviewed.shadows ?? []) as Json[];
      if (shadows.length === 0) parts.push(el("p", { class: "muted" }, "No SHADOW candidate awaits review."));
      for (const shadow of shadows) {
        const id = String(shadow.artifactId);
        const artifact = await api("GET", path("/v1/artifacts", id));
        const body = artifact.body as Json;
        parts.push(
          el("h2", {}, `Shadow candidate ${id}`),
          el(
            "div",
            { class: "columns" },
            summaryCard("Published", publishedId, published),
            summaryCard("Shadow", id, body),
          ),
          el("h3", {}, "What changed"),
          differences(published, body),
          checklistTable((shadow.checklist ?? []) as Json[]),
          ...(((shadow.earlierReadings ?? []) as Json[]).length > 0
            ? [earlierReadings(shadow.earlierReadings as Json[])]
            : []),
          el("h3", {}, "Gate report"),
          gateReport(artifact.record as Json),
          el(
            "p",
            {},
            button("Approve", () => void decide("approve", id, subject), "primary"),
            " ",
            button("Reject", () => void decide("reject", id, subject)),
          ),
        );
      }
      if (shadows.length === 0 && publishedId) parts.push(summaryCard("Published", publishedId, published));
      detail.replaceChildren(...parts);
    } catch (error) {
      detail.replaceChildren(el("p", { class: "refused" }, String((error as Error).message)));
    }
  }

  async function loadSubjects() {
    const list = document.getElementById("subjects") as HTMLElement;
    try {
      const page = await api("GET", "/v1/subjects?limit=100");
      list.replaceChildren(
        ...(page.subjects as Json[]).map((s) => {
          const shadows = (s.shadows as unknown[]).length;
          const badge =
            shadows > 0 ? `${shadows} shadow waiting` : s.serving === "summary" ? "summary" : "raw";
          const item = button("", () => void showSubject(String(s.subject)));
          item.append(String(s.subject), " ", el("span", { class: "badge" }, badge));
          if (s.serving === "raw" && s.reason) item.title = String(s.reason);
          return el("li", {}, item);
        }),
      );
      // Only its own error is cleared: an approve's or reject's outcome stays on screen.
      if (status.textContent?.startsWith("Cannot list subjects")) say("");
    } catch (error) {
      list.replaceChildren();
      say(`Cannot list subjects: ${(error as Error).message}`, true);
    }
  }

  const form = document.getElementById("token-form") as HTMLFormElement;
  const input = document.getElementById("token") as HTMLInputElement;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    token = input.value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    input.value = "";
    void loadSubjects();
  });
  void loadSubjects().then(() => {
    if (location.hash.length <= 1) return;
    // A hand-typed fragment may not be percent-encoding (`#%`): show the list, never throw.
    let subject: string;
    try {
      subject = decodeURIComponent(location.hash.slice(1));
    } catch {
      return;
    }
    void showSubject(subject);
  });
}

/** The script `/review/app.js` serves: the function above, compiled, called once. */
export const REVIEW_SCRIPT = `(${reviewApp.toString()})();\n`;
