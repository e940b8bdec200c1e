// Keyboard-first review: one key per verdict, l/r/b for the retained version, Enter saves (in the reason
// field), n skips, u undoes. Clicking a highlighted run scrolls to its partner on the other side.
// Document text is never written into the page from here: only classes, focus and scrolling change.
(function () {
  "use strict";
  const form = document.getElementById("judge-form");
  const verdictKeys = {k: "keep-both", m: "merge-entry", q: "public-quote", v: "valid-revision", a: "arbitration"};
  const retainedKeys = {l: "left", r: "right", b: "both"};
  let leaving = false;  // a form is being submitted: the server releases the lease itself

  function typing(target) {
    return target && (target.tagName === "INPUT" && target.type === "text" || target.tagName === "TEXTAREA" ||
      target.tagName === "SELECT");
  }

  function choose(name, value) {
    if (!form) return false;
    const input = form.querySelector('input[name="' + name + '"][value="' + value + '"]');
    if (!input) return false;
    input.checked = true;
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const key = event.key.toLowerCase();
    if (verdictKeys[key] && choose("verdict", verdictKeys[key])) {
      event.preventDefault();
      const reason = document.getElementById("reason");
      if (reason) reason.focus();
    } else if (retainedKeys[key] && choose("retained", retainedKeys[key])) {
      event.preventDefault();
    } else if (key === "n") {
      const skip = document.getElementById("skip-form");
      if (skip) { event.preventDefault(); leaving = true; skip.submit(); }
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
    span.addEventListener("keydown", function (event) { if (event.key === "Enter") jump(); });
  });
})();
