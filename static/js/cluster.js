// The cluster page: a verdict key (k m q v) for the family, with its preset reason; 1-9 and 0 pick the
// retained version; s then a digit splits that member off (again: the next kind, then back into the family);
// e types a reason; Enter decides the cluster; n opens the next cluster; u undoes my last decision.
(function () {
  "use strict";
  const form = document.getElementById("judge-form");
  const reason = document.getElementById("reason");
  const shared = window.dedupReview;  // keys.js
  const verdictKeys = shared.verdictKeys();
  const fillPreset = shared.presetFiller(reason, reason ? reason.value : "");  // the default verdict's preset
  const rows = Array.from(document.querySelectorAll("#members tbody tr"));
  let splitting = false;  // s was pressed: the next digit splits a member off

  function member(key) {
    const index = key === "0" ? 9 : Number(key) - 1;
    return rows[index];
  }

  if (form) {
    form.querySelectorAll('input[name="verdict"]').forEach(function (input) {
      input.addEventListener("change", function () { fillPreset(input.value); });
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !form) return;
    if (shared.typing(event.target)) {
      if (event.key === "Escape" && !event.isComposing) event.target.blur();  // an IME's Escape cancels its own
      return;
    }
    const key = window.dedupShortcut(event);  // keys.js: by position, never an IME's keystroke
    if (/^[0-9]$/.test(key)) {
      const row = member(key);
      if (!row) return;
      event.preventDefault();
      if (splitting) {
        const select = row.querySelector("select");
        select.selectedIndex = (select.selectedIndex + 1) % select.options.length;
        splitting = false;
      } else {
        row.querySelector('input[name="keeper"]').checked = true;
      }
      rows.forEach(function (r) { r.classList.toggle("chosen", r.querySelector('input[name="keeper"]').checked); });
    } else if (key === "s") {
      event.preventDefault();
      splitting = true;
    } else if (verdictKeys[key]) {
      const input = form.querySelector('input[name="verdict"][value="' + verdictKeys[key] + '"]');
      if (input) { event.preventDefault(); input.checked = true; fillPreset(input.value); }
    } else if (key === "e" && reason) {
      event.preventDefault();
      reason.focus();
      reason.select();
    } else if (key === "Enter" && !(event.target.closest && event.target.closest("a, button, summary"))) {
      event.preventDefault();
      form.requestSubmit();
    } else if (key === "n") {
      const next = document.getElementById("skip-link");
      if (next) { event.preventDefault(); window.location.assign(next.href); }
    } else if (key === "u") {
      const undo = document.getElementById("undo-form");
      if (undo) { event.preventDefault(); undo.submit(); }
    }
  });
})();
