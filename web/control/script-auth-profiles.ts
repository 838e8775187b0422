/**
 * The control page's Auth profiles view: each model provider's API-key profiles in the order the
 * next call tries them, with the Worker secret each reads (its name, and whether it is set — the
 * API never sends a value), its state (ready, cooling down, disabled, no key), error count, last
 * used and last answered (GET /admin/auth-profiles); Reset forgets a profile's cooldown
 * (POST /admin/auth-profiles/reset, audited).
 */
export const CONTROL_AUTH_PROFILES_SCRIPT = String.raw`
view("auth-profiles", "Auth profiles", function () {
  return api("GET", "/admin/auth-profiles").then(function (data) {
    function reset(profile, button) {
      act(button, function () { return api("POST", "/admin/auth-profiles/reset", { profiles: [profile.id] }); },
        function () { return "Forgot the cooldown of " + profile.id; });
    }
    function state(p) {
      if (p.state === "ready") return h("span", { cls: "ok", text: "ready" });
      if (p.state === "no_key") return h("span", { cls: "err", text: "no key set" });
      return h("span", { cls: "warn", text: (p.state === "disabled" ? "disabled" : "cooling down") + " (" + p.reason + ") until " + when(p.until) });
    }
    var cards = data.providers.map(function (provider) {
      return h("div", { cls: "card", "data-provider": provider.provider },
        h("h3", { text: provider.provider }),
        h("p", { cls: "muted", text: provider.orderedBy === "auth.order" ? "Tried in auth.order." : "Tried least recently used first." }),
        table([
          { label: "Profile", cell: function (p) { return h("code", { text: p.id }); } },
          { label: "Secret", cell: function (p) { return h("span", null, h("code", { text: p.secret }), p.secretSet ? null : h("span", { cls: "err", text: " (not set)" })); } },
          { label: "State", cell: state },
          { label: "Errors", cell: function (p) { return String(p.errorCount); } },
          { label: "Last used", cell: function (p) { return when(p.lastUsed); } },
          { label: "Last answered", cell: function (p) { return when(p.lastGood); } },
          { label: "", cell: function (p) {
            if (p.state !== "cooldown" && p.state !== "disabled") return null;
            var button = h("button", { "data-action": "reset-profile", text: "Reset" });
            button.addEventListener("click", function () { reset(p, button); });
            return button;
          } },
        ], provider.profiles));
    });
    var ignored = data.ignored.length ? h("div", { cls: "card" }, h("h3", { text: "Not used here" }),
      h("p", { cls: "muted", text: data.ignored.map(function (p) { return p.id + " (" + p.mode + ")"; }).join(", ") + ": only api_key profiles rotate." })) : null;
    return [h("h2", { text: "Auth profiles" }),
      cards.length ? cards : h("div", { cls: "card" }, empty("No auth profiles are configured (config keys auth.profiles, auth.order).")),
      ignored];
  });
});
`;
