// Signing in: a demo user and role on a local server, a pasted bearer token, or carrying
// on as a visitor. (`/#token=<bearer>` is taken by app.js before this view shows.)

import {api, ApiError} from "./api.js";
import {h, fill} from "./dom.js";

const ROLES = ["staff", "manager", "admin", "member"];

export class SignInView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
  }

  show(note = "") {
    const info = this.app.info || {};
    fill(this.root, h("div", {class: "signin"}, h("div", {class: "signin-card"},
      h("h2", {}, "Sign in"),
      note ? h("p", {class: "note note-error", role: "alert"}, note) : null,
      h("p", {class: "muted"}, "Chat with your operations assistant, follow your requests and decide the changes it proposes."),
      info.local && (info.demo_users || []).length ? this.localForm(info.demo_users) : null,
      this.tokenForm(),
      h("p", {class: "visitor"}, h("button", {type: "button", class: "link", onclick: () => this.app.signedIn(null)},
        "Continue as a visitor"), h("span", {class: "muted"}, " (opening hours, classes, public information)")))));
    this.root.querySelector("select, textarea")?.focus();
  }

  localForm(users) {
    const error = h("div", {class: "form-error", role: "alert"});
    const user = h("select", {id: "signin-user", onchange: () => { role.value = users[user.selectedIndex].role; }},
      users.map((u, i) => h("option", {value: u.user_id, selected: i === 0}, `${u.name} (${u.role})`)));
    const role = h("select", {id: "signin-role"}, ROLES.map((r) => h("option", {value: r}, r)));
    role.value = users[0].role;
    return h("form", {class: "signin-local", onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = "";
      try {
        const {token} = await api("/v1/local/sign-in", {method: "POST", body: {user_id: user.value, role: role.value}});
        this.app.signedIn(token);
      } catch (err) { error.textContent = err.message; }
    }},
    h("h3", {}, "Try it as someone at the club"),
    h("div", {class: "row"},
      h("div", {class: "field"}, h("label", {for: "signin-user"}, "Person"), user),
      h("div", {class: "field"}, h("label", {for: "signin-role"}, "Role"), role)),
    error, h("button", {type: "submit", class: "primary"}, "Sign in"));
  }

  tokenForm() {
    const error = h("div", {class: "form-error", role: "alert"});
    const text = h("textarea", {id: "signin-token", rows: "3", spellcheck: "false",
      placeholder: "opsgraph token --tenant demo --user you --role manager"});
    return h("form", {class: "signin-token", onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = "";
      const value = text.value.trim();
      if (!value) { error.textContent = "Paste a bearer token first."; text.focus(); return; }
      try {  // tried before it is kept
        const res = await fetch("/v1/agents", {headers: {authorization: `Bearer ${value}`}});
        if (res.ok) { this.app.signedIn(value); return; }
        const body = await res.json().catch(() => ({}));
        const why = new ApiError(res.status, body).message;
        error.textContent = res.status === 401 ? `This token was not accepted: ${why}` : why;
      } catch {
        error.textContent = "The server cannot be reached. Check your connection and try again.";
      }
    }},
    h("label", {for: "signin-token"}, "Bearer token"), text, error,
    h("button", {type: "submit"}, "Use this token"));
  }

  hide() {}
}
