// The page: who is signed in, which model answers, and which view shows (by the URL's
// fragment: #/ and #/threads/<id> chat, #/approvals, the admin views of admin.js
// (#/settings, #/harness, #/knowledge, ...), #/record/<kind>/<id>).

import {api, token, setToken, whoami, isManager, isAdmin} from "./api.js";
import {h, $, fill, shown} from "./dom.js";
import {ADMIN_VIEWS} from "./admin.js";
import {ChatView} from "./chat.js";
import {InboxView} from "./inbox.js";
import {SignInView} from "./signin.js";

const VISITOR_KEY = "opsgraph.visitor";
// Which read operation shows a source record, and the argument that names it.
/** How a source of each kind is opened: the read operation and its arguments. */
const RECORD_READS = {
  member: ["members.get", (id) => ({member: id})],
  invoice: ["invoices.get", (id) => ({invoice: id})],
  document: ["knowledge.read", (id) => ({document: id})],
  section: ["knowledge.read_section", (id) => ({document: id.split("#")[0], section: id})],
  object: ["knowledge.get_object", (id) => ({object: id})]};
const MODE_WORDS = {demo: "Demo mode", bedrock: "Bedrock", openai: "OpenAI-compatible", configured: "Model"};

class App {
  constructor() {
    this.info = null;
    this.me = null;
    this.view = null;
    this.viewName = null;
    this.lastRoute = "#/";
  }

  async boot() {
    this.takeToken();
    try { this.info = await api("/v1/info"); } catch { this.info = null; }
    window.addEventListener("hashchange", () => this.route());
    window.addEventListener("opsgraph:unauthorized", (e) => {
      this.signInNote = `Please sign in again (${e.detail}).`;
      this.signOut();
    });
    $("#signout").addEventListener("click", () => this.signOut());
    $("#record-close").addEventListener("click", () => $("#record").close());
    $("#record").addEventListener("close", () => {
      if (location.hash.startsWith("#/record/")) history.replaceState(null, "", this.lastRoute);
    });
    this.header();
    this.route();
    setInterval(() => { if (!document.hidden) this.refreshBadge(); }, 15000);
  }

  /** Sign in from a `#token=…` link (the fragment never reaches the server); drop an
   * expired token, saying so. */
  takeToken() {
    const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromLink) {
      setToken(fromLink);
      sessionStorage.removeItem(VISITOR_KEY);
      history.replaceState(null, "", `${location.pathname}#/`);
    }
    this.me = whoami();
    if (this.me && this.me.exp && this.me.exp * 1000 <= Date.now()) {
      setToken(null);
      this.me = null;
      this.signInNote = "Your sign-in has expired: please sign in again.";
    }
    return !!fromLink;
  }

  signedIn(newToken) {
    setToken(newToken);
    if (newToken) sessionStorage.removeItem(VISITOR_KEY); else sessionStorage.setItem(VISITOR_KEY, "1");
    this.me = whoami();
    this.view?.hide();
    this.view = null;
    this.viewName = null;
    this.header();
    if (location.hash === "#/") this.route(); else location.hash = "#/";
  }

  signOut() {
    setToken(null);
    sessionStorage.removeItem(VISITOR_KEY);
    this.me = null;
    this.header();
    if (location.hash === "#/signin") this.route(); else location.hash = "#/signin";
  }

  header() {
    const info = this.info;
    const model = $("#model");
    if (info) {
      model.hidden = false;
      model.dataset.mode = info.mode;
      fill(model, h("span", {class: "model-mode"}, MODE_WORDS[info.mode] || info.mode),
        h("span", {class: "model-name"}, info.model || ""));
      model.title = info.message || "";
    } else {
      model.hidden = true;
    }
    const banner = $("#banner");
    banner.hidden = !(info && info.mode === "demo");
    if (info && info.mode === "demo") {
      const words = info.message || "Answers come from scripted examples; no model is called.";
      const rest = words.replace(/^Demo mode[:.]\s*/i, "");
      fill(banner, h("strong", {}, "Demo mode. "), rest.charAt(0).toUpperCase() + rest.slice(1));
    }
    const me = this.me;
    $("#nav-approvals").hidden = !isManager(me);
    for (const name of Object.keys(ADMIN_VIEWS)) $(`#nav-${name}`).hidden = !isAdmin(me);
    const known = ((info && info.demo_users) || []).find((u) => me && u.user_id === me.user);
    fill($("#who"), me ? [h("span", {class: "who-name", title: me.user}, known ? known.name : me.user),
      h("span", {class: "who-role"}, me.roles.join(", "))]
      : [h("span", {class: "who-name"}, "Visitor")]);
    $("#signout").textContent = me ? "Sign out" : "Sign in";
    this.refreshBadge();
  }

  async refreshBadge() {
    const badge = $("#approvals-count");
    if (!isManager(this.me)) { badge.hidden = true; return; }
    try {
      const {changes} = await api("/v1/approvals?status=pending");
      badge.hidden = changes.length === 0;
      badge.textContent = String(changes.length);
      badge.setAttribute("aria-label", `${changes.length} waiting`);
    } catch { badge.hidden = true; }
  }

  get signedInOrVisitor() { return !!token() || sessionStorage.getItem(VISITOR_KEY) === "1"; }

  route() {
    if (location.hash.startsWith("#token=") && this.takeToken()) {
      this.view?.hide();
      this.view = null;
      this.viewName = null;
      this.header();
    }
    const hash = location.hash || "#/";
    if (hash.startsWith("#/record/")) { this.openRecord(hash); return; }
    this.lastRoute = hash;
    const signingIn = !this.signedInOrVisitor || hash === "#/signin";
    $("#signout").hidden = signingIn;  // the page itself is the way in
    if (signingIn) {
      $("#view").dataset.view = "signin";
      this.view?.hide();
      this.view = null;
      this.viewName = null;
      new SignInView($("#view"), this).show(this.signInNote);
      this.signInNote = "";
      return;
    }
    if (hash === "#/approvals" && isManager(this.me)) {
      this.mount("approvals", () => new InboxView($("#view"), this)).show();
    } else if (Object.hasOwn(ADMIN_VIEWS, hash.slice(2)) && isAdmin(this.me)) {
      const name = hash.slice(2);
      this.mount(name, () => new ADMIN_VIEWS[name]($("#view"), this)).show();
    } else {
      const chat = this.mount("chat", () => new ChatView($("#view"), this));
      const match = /^#\/threads\/(.+)$/.exec(hash);
      chat.open(match ? decodeURIComponent(match[1]) : null);
    }
  }

  /** The view `name` in #view: kept while it stays, made anew when it comes back. */
  mount(name, make) {
    $("#view").dataset.view = name;
    for (const link of document.querySelectorAll(".nav a")) {
      if (link.dataset.view === name) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (this.view && this.viewName === name) return this.view;
    this.view?.hide();
    this.view = make();
    this.viewName = name;
    return this.view;
  }

  async openRecord(hash) {
    const [, kind, id] = hash.split("/").slice(1).map(decodeURIComponent);
    const dialog = $("#record");
    const body = $("#record-body");
    $("#record-title").textContent = `${kind[0].toUpperCase()}${kind.slice(1)} ${id}`;
    fill(body, h("p", {class: "muted"}, "Loading…"));
    if (!dialog.open) dialog.showModal();
    const read = RECORD_READS[kind];
    if (!read) { fill(body, h("p", {class: "muted"}, `No view for ${kind} records yet; its id is ${id}.`)); return; }
    try {
      const {result} = await api(`/v1/operations/${read[0]}`, {method: "POST", body: {args: read[1](id)}});
      const rows = Object.entries(result || {}).filter(([, v]) => v === null || typeof v !== "object");
      const name = result && (result.name || result.title || result.number);
      if (name) $("#record-title").textContent = `${kind[0].toUpperCase()}${kind.slice(1)}: ${name}`;
      fill(body, h("dl", {class: "record"}, rows.flatMap(([k, v]) => [h("dt", {}, k.replaceAll("_", " ")), h("dd", {}, shown(v))])));
    } catch (error) {
      fill(body, h("p", {class: "note note-error"}, error.message));
    }
  }
}

new App().boot();
