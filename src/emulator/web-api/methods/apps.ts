/** apps.connections.open: where the app opens its Socket Mode WebSocket (app-level token only). */
import { ok, type WebApiMethod } from '../method.ts';

export const appsConnectionsOpen: WebApiMethod = {
  token: 'app',
  run(_args, { socketMode }) {
    return ok({ url: socketMode.openConnection() });
  },
};
