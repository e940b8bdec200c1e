// What the pages' scripts share. The key a shortcut means, whatever the keyboard layout or input method: the
// position of a letter or digit (event.code: K is "k" on a Persian layout too, where event.key is "ن"), or the
// key's name (Enter, Escape). Keystrokes that belong to an input method's composition (a Chinese IME picking
// characters) mean nothing.
window.dedupShortcut = function (event) {
  "use strict";
  if (event.isComposing || event.keyCode === 229) return "";
  const code = event.code || "";
  if (/^Key[A-Z]$/.test(code)) return code.slice(3).toLowerCase();
  if (/^(Digit|Numpad)[0-9]$/.test(code)) return code.slice(-1);
  if (code === "Enter" || code === "NumpadEnter") return "Enter";
  if (code === "Escape") return "Escape";
  // No place reported (some on-screen keyboards): a letter of the page language's layout is its key there.
  const layout = window.dedupKeyboard || (window.dedupKeyboard = JSON.parse(
    (document.getElementById("keyboard-layout") || {}).textContent || "{}"));
  if (event.key && layout[event.key]) return layout[event.key];
  return event.key && event.key.length === 1 ? event.key.toLowerCase() : (event.key || "");
};

// The review pages' (a pair, an arbitration case, a cluster) common parts, written once.
window.dedupReview = (function () {
  "use strict";
  function pageJSON(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : {};
  }
  return {
    // verdict by key; the verdicts and their keys come from the page (screening.vocabulary through the
    // view), never from a script
    verdictKeys: function () {
      const byKey = {};
      Object.entries(pageJSON("verdict-keys")).forEach(function (entry) { byKey[entry[1]] = entry[0]; });
      return byKey;
    },
    // a shortcut key typed into a text box, a reason or a select is text, not a shortcut
    typing: function (target) {
      return target && (target.tagName === "INPUT" && target.type === "text" || target.tagName === "TEXTAREA" ||
        target.tagName === "SELECT");
    },
    // fill(verdict) puts the corpus's preset reason for the verdict in the reason box, unless someone typed a
    // reason of their own there; with no preset, the box says so (its data-no-preset, translated with the
    // page). `shown`: the preset the box holds as the page opens ("" when what it holds was typed).
    presetFiller: function (reason, shown) {
      const presets = pageJSON("preset-reasons");
      return function (verdict) {
        if (!reason || (reason.value && reason.value !== shown)) return;  // a typed reason stays
        shown = presets[verdict] || "";
        reason.value = shown;
        if (reason.dataset.noPreset) {
          reason.placeholder = shown ? "" : reason.dataset.noPreset.replace("{verdict}", verdict);
        }
      };
    },
  };
})();

// A page's messages stay where they are, in the page's flow, until the reader dismisses them (each its own ×).
(function () {
  "use strict";
  document.querySelectorAll(".messages button.dismiss").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      const box = button.closest(".messages");
      button.closest("li").remove();
      if (!box.querySelector("li")) box.remove();
    });
  });
})();
