// Applies the colour theme chosen in the console before the first paint (web/src/lib/theme.ts
// describes the key and its values). A file, not an inline script: the console's CSP allows none.
try {
  var theme = localStorage.getItem('loglane-theme');
  if (theme === 'light' || theme === 'dark') document.documentElement.setAttribute('data-theme', theme);
} catch (e) {
  // Storage disabled: the system's theme applies.
}
