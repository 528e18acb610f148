import { createContext, useContext } from 'react';
import type { Api } from './api.ts';

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('ApiContext is missing');
  return api;
}

/** Polite announcements for screen readers and a visible toast. */
export const ToastContext = createContext<(message: string, kind?: 'info' | 'error') => void>(() => undefined);
export const useToast = () => useContext(ToastContext);
