// Every route Parley serves, in one table (the router, the docs generator and tests read it).
import type { AnyRoute } from '../http/route';
import { botStorageRoutes } from './bot-storage';
import { botRoutes } from './bots';
import { channelRoutes } from './channels';
import { eventRoutes } from './events';
import { messageRoutes } from './messages';
import { profileFieldRoutes } from './profile-fields';
import { scheduledMessageRoutes } from './scheduled-messages';
import { serverRoutes } from './server';
import { typingRoutes } from './typing';
import { userGroupRoutes } from './user-groups';
import { userRoutes } from './users';

export const allRoutes: readonly AnyRoute[] = [
  ...serverRoutes, ...userRoutes, ...eventRoutes, ...channelRoutes, ...messageRoutes,
  ...userGroupRoutes, ...botRoutes, ...botStorageRoutes, ...profileFieldRoutes,
  ...typingRoutes, ...scheduledMessageRoutes];
