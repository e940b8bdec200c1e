// Keyboard-first review. A verdict key (k m q v a) picks the verdict and fills in its preset reason; Enter
// saves it and opens the next pair, so a decision takes two keys. e types a reason of one's own (Escape
// leaves the box); l r b pick the retained version (the pane on the left of the screen, on the right, both)
// wherever the focus is, except while typing; n skips; u undoes. Clicking a highlighted run scrolls to its
// partner on the other side. Document text is never written into the page from here: only classes, focus,
// form values and scrolling change.
(function () {
  "use strict";
  const form = document.getElementById("judge-form");
  const reason = document.getElementById("reason");
  const shared = window.dedupReview;  // keys.js
  const verdictKeys = shared.verdictKeys();
  const fillPreset = shared.presetFiller(reason, "");
  // The retained version's keys come from the page too: l and r name the side of the screen a document is
  // drawn on, which mirrors in a right-to-left language (screening.sides), b keeps both.
  const retainedKeys = {};
  document.querySelectorAll('#judge-form input[name="retained"][data-key]').forEach(function (input) {
    retainedKeys[input.dataset.key] = input.value;
  });
  let leaving = false;  // a form is being submitted: the server releases the lease itself

  function choose(name, value) {
    if (!form) return false;
    const input = form.querySelector('input[name="' + name + '"][value="' + value + '"]');
    if (!input) return false;
    input.checked = true;
    if (name === "verdict") fillPreset(value);
    return true;
  }

  if (form) {
    form.querySelectorAll('input[name="verdict"]').forEach(function (input) {
      input.addEventListener("change", function () { fillPreset(input.value); });
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (shared.typing(event.target)) {
      if (event.key === "Escape" && !event.isComposing) event.target.blur();  // an IME's Escape cancels its own
      return;
    }
    const key = window.dedupShortcut(event);  // keys.js: by position, never an IME's keystroke
    if (verdictKeys[key] && choose("verdict", verdictKeys[key])) {
      event.preventDefault();
    } else if (retainedKeys[key] && choose("retained", retainedKeys[key])) {
      event.preventDefault();
    } else if (key === "Enter" && form && !(event.target.closest && event.target.closest("a, button, summary"))) {
      event.preventDefault();
      if (!form.querySelector('input[name="verdict"]:checked')) return;
      if (reason && !reason.value) { reason.focus(); return; }  // this verdict has no preset: type a reason
      form.requestSubmit();
    } else if (key === "e" && reason) {
      event.preventDefault();
      reason.focus();
      reason.select();
    } else if (key === "n") {
      const skip = document.getElementById("skip-form");
      const nextCase = document.getElementById("skip-link");  // the arbiter's page: the next case
      if (skip) { event.preventDefault(); leaving = true; skip.submit(); }
      else if (nextCase) { event.preventDefault(); window.location.assign(nextCase.href); }
    } else if (key === "u") {
      const undo = document.getElementById("undo-form");
      if (undo) { event.preventDefault(); undo.submit(); }
    }
  });

  // The pair is held for this reviewer under a short lease: renewed while the page stays open, let go when
  // the page is left without a decision (saving or skipping releases it on the server).
  const lease = document.getElementById("lease-form");
  if (lease) {
    // Renewed only while someone is at the page: a tab left open and untouched lets its pair go in time.
    const every = 1000 * Number(lease.dataset.renewSeconds || 200);
    let lastActivity = Date.now();
    ["keydown", "pointerdown", "pointermove", "scroll", "wheel"].forEach(function (name) {
      document.addEventListener(name, function () { lastActivity = Date.now(); }, {passive: true});
    });
    const renew = function () {
      if (document.visibilityState !== "visible" || Date.now() - lastActivity > 2 * every) return;
      fetch(lease.action, {method: "POST", body: new FormData(lease)});
    };
    setInterval(renew, every);
    document.querySelectorAll("form").forEach(function (f) {
      f.addEventListener("submit", function () { leaving = true; });
    });
    window.addEventListener("pagehide", function () {
      if (leaving) return;
      const data = new FormData(lease);
      data.append("release", "1");
      navigator.sendBeacon(lease.action, data);
    });
  }

  function partner(span) {
    const pane = span.closest(".pane");
    const other = document.getElementById(pane.id === "pane-left" ? "pane-right" : "pane-left");
    return other && other.querySelector('.run[data-run="' + span.dataset.run + '"]');
  }

  document.querySelectorAll(".pane .run").forEach(function (span) {
    function jump() {
      const target = partner(span);
      if (!target) return;
      target.scrollIntoView({block: "center", behavior: "smooth"});
      target.classList.add("flash");
      setTimeout(function () { target.classList.remove("flash"); }, 1200);
    }
    span.addEventListener("click", jump);
    span.addEventListener("keydown", function (event) { if (event.key === "Enter") { event.stopPropagation(); jump(); } });
  });
})();
