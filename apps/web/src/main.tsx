// first: settings that must hold before any module validates anything
import './csp';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider } from 'jotai';
import { RouterProvider } from 'react-router/dom';
import { HotkeysProvider } from 'react-hotkeys-hook';
import './i18n';
import './styles.css';
import { appStore } from './store';
import { router } from './router';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Provider store={appStore}>
      <HotkeysProvider>
        <RouterProvider router={router} />
      </HotkeysProvider>
    </Provider>
  </StrictMode>,
);
