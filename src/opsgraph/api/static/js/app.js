// The page: who is signed in, which model answers, and which view shows (by the URL's
// fragment: #/ and #/threads/<id> chat, #/approvals, #/history, #/drafts[/<id>], the admin
// views of admin.js (#/settings, #/harness, #/knowledge, ...), #/record/<kind>/<id>).

import {api, token, setToken, whoami, isManager, isAdmin} from "./api.js";
import {h, $, fill} from "./dom.js";
import {ADMIN_VIEWS} from "./admin.js";
import {ChatView} from "./chat.js";
import {DraftsView, mayReviewDrafts, openDrafts} from "./drafts.js";
import {HistoryView} from "./history.js";
import {InboxView} from "./inbox.js";
import {openRecord} from "./record.js";
import {SignInView} from "./signin.js";

const VISITOR_KEY = "opsgraph.visitor";
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
    if (info && info.mode === "demo") {  // in plain words; the settings to make behind a toggle
      fill(banner, h("details", {class: "banner-details"},
        h("summary", {}, h("strong", {}, "Demo mode: "),
          "only the example requests are answered, from a script. No AI model is connected yet."),
        h("p", {}, "For whoever sets opsgraph up: ", info.message || "")));
    }
    const me = this.me;
    $("#nav-approvals").hidden = !isManager(me);
    $("#nav-history").hidden = !isManager(me);
    $("#nav-drafts").hidden = !mayReviewDrafts(me);
    for (const name of Object.keys(ADMIN_VIEWS)) $(`#nav-${name}`).hidden = !isAdmin(me);
    this.showWho();
    $("#signout").textContent = me ? "Sign out" : "Sign in";
    this.refreshBadge();
  }

  /** The signed-in person's name (`GET /v1/me`: their staff or member record) and role. */
  async showWho() {
    const me = this.me;
    const draw = (name) => fill($("#who"), me
      ? [h("span", {class: "who-name", title: me.user}, name), h("span", {class: "who-role"}, me.roles.join(", "))]
      : [h("span", {class: "who-name"}, "Visitor")]);
    if (!me) { draw(); return; }
    if (this.person?.user_id === me.user) { draw(this.person.name); return; }
    draw("");
    let person;
    try { person = await api("/v1/me"); } catch { person = {user_id: me.user, name: me.user}; }
    if (this.me !== me) return;  // signed out or in again meanwhile
    this.person = person;
    draw(person.name);
  }

  async refreshBadge() {
    this.refreshDraftsBadge();
    const badge = $("#approvals-count");
    if (!isManager(this.me)) { badge.hidden = true; return; }
    try {
      const {changes} = await api("/v1/approvals?status=pending");
      badge.hidden = changes.length === 0;
      badge.textContent = String(changes.length);
      badge.setAttribute("aria-label", `${changes.length} waiting`);
    } catch { badge.hidden = true; }
  }

  async refreshDraftsBadge() {
    const badge = $("#drafts-count");
    const open = mayReviewDrafts(this.me) ? await openDrafts().catch(() => 0) : 0;
    badge.hidden = open === 0;
    badge.textContent = String(open);
    badge.setAttribute("aria-label", `${open} to review`);
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
    } else if (hash === "#/history" && isManager(this.me)) {
      this.mount("history", () => new HistoryView($("#view"), this)).show();
    } else if (/^#\/drafts(\/|$)/.test(hash) && mayReviewDrafts(this.me)) {
      this.mount("drafts", () => new DraftsView($("#view"), this)).show(decodeURIComponent(hash.slice(9)) || null);
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

  openRecord(hash) {
    const [, kind, id] = hash.split("/").slice(1).map(decodeURIComponent);
    openRecord(kind, id);
  }
}

new App().boot();
