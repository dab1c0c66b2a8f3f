import { createStore } from 'jotai';

/** The console's jotai store, shared with code outside React (alerts, sign-out). */
export const appStore = createStore();
