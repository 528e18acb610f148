import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { Api } from './lib/api.ts';
import { applyThemeChoice, themeChoice } from './lib/theme.ts';
import './styles.css';

// theme-init.js has done this before the first paint; again here in case it could not load.
applyThemeChoice(themeChoice(), document.documentElement);
const api = new Api();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={api} />
  </StrictMode>,
);
