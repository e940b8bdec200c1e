// The key a shortcut means, whatever the keyboard layout or input method: the position of a letter or digit
// (event.code: K is "k" on a Persian layout too, where event.key is "ن"), or the key's name (Enter, Escape).
// Keystrokes that belong to an input method's composition (a Chinese IME picking characters) mean nothing.
window.dedupShortcut = function (event) {
  "use strict";
  if (event.isComposing || event.keyCode === 229) return "";
  const code = event.code || "";
  if (/^Key[A-Z]$/.test(code)) return code.slice(3).toLowerCase();
  if (/^(Digit|Numpad)[0-9]$/.test(code)) return code.slice(-1);
  if (code === "Enter" || code === "NumpadEnter") return "Enter";
  if (code === "Escape") return "Escape";
  return event.key && event.key.length === 1 ? event.key.toLowerCase() : (event.key || "");
};
