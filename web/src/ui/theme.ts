// Light, dark, or the system's choice (the default), kept in this browser; applied as html[data-theme].
import { signal } from '@preact/signals';

export type Theme = 'system' | 'light' | 'dark';
const KEY = 'mailpath-theme';

function stored(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

export const theme = signal<Theme>(stored());

function apply(value: Theme): void {
  if (value === 'system') delete document.documentElement.dataset['theme'];
  else document.documentElement.dataset['theme'] = value;
}
apply(theme.value);

export function setTheme(value: Theme): void {
  theme.value = value;
  apply(value);
  try {
    if (value === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, value);
  } catch {
    // private mode: the choice lasts this page only
  }
}
