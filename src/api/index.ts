// Every route Parley serves, in one table (the router, the docs generator and tests read it).
import type { AnyRoute } from '../http/route';
import { channelRoutes } from './channels';
import { eventRoutes } from './events';
import { messageRoutes } from './messages';
import { serverRoutes } from './server';
import { userRoutes } from './users';

export const allRoutes: readonly AnyRoute[] = [...serverRoutes, ...userRoutes, ...eventRoutes, ...channelRoutes, ...messageRoutes];
