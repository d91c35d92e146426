// Every route Parley serves, in one table (the router, the docs generator and tests read it).
import type { AnyRoute } from '../http/route';
import { avatarRoutes } from './avatars';
import { botStorageRoutes } from './bot-storage';
import { botRoutes } from './bots';
import { channelRoutes } from './channels';
import { draftRoutes } from './drafts';
import { navigationViewRoutes } from './navigation-views';
import { playgroundRoutes } from './playgrounds';
import { savedSnippetRoutes } from './saved-snippets';
import { eventRoutes } from './events';
import { healthRoutes } from './health';
import { metricsRoutes } from './metrics';
import { inviteRoutes } from './invites';
import { pageRoutes } from './pages';
import { linkifierRoutes } from './linkifiers';
import { messageRoutes } from './messages';
import { messageExtraRoutes } from './message-extras';
import { messageReportRoutes } from './message-report';
import { presenceRoutes } from './presence';
import { profileFieldRoutes } from './profile-fields';
import { pushRoutes } from './push';
import { reminderRoutes } from './reminders';
import { scheduledMessageRoutes } from './scheduled-messages';
import { serverRoutes } from './server';
import { settingsRoutes } from './settings';
import { submessageRoutes } from './submessages';
import { staticFileRoutes } from './static-files';
import { tusRoutes } from './tus';
import { typingRoutes } from './typing';
import { uploadRoutes } from './uploads';
import { userGroupRoutes } from './user-groups';
import { userRoutes } from './users';
import { userTopicRoutes } from './user-topics';
import { alertWordRoutes } from './alert-words';
import { mutedUserRoutes } from './muted-users';
import { realmDefaultsRoutes } from './realm-defaults';
import { realmEmojiRoutes } from './realm-emoji';
import { realmRoutes } from './realm';
import { realmExportRoutes } from './realm-export';
import { userExtraRoutes } from './users-extra';
import { userStatusRoutes } from './user-status';
import { webRoutes } from './web';

export const allRoutes: readonly AnyRoute[] = [
  ...serverRoutes, ...userRoutes, ...eventRoutes, ...channelRoutes, ...messageRoutes, ...messageExtraRoutes, ...submessageRoutes, ...messageReportRoutes, ...userTopicRoutes,
  ...userGroupRoutes, ...botRoutes, ...botStorageRoutes, ...profileFieldRoutes,
  ...typingRoutes, ...scheduledMessageRoutes, ...reminderRoutes,
  ...settingsRoutes, ...draftRoutes, ...savedSnippetRoutes, ...navigationViewRoutes, ...playgroundRoutes, ...presenceRoutes, ...linkifierRoutes,
  ...inviteRoutes, ...pageRoutes,
  ...uploadRoutes, ...tusRoutes, ...pushRoutes,
  ...userStatusRoutes, ...userExtraRoutes, ...alertWordRoutes, ...mutedUserRoutes, ...realmEmojiRoutes, ...realmDefaultsRoutes,
  ...realmRoutes, ...realmExportRoutes, ...webRoutes, ...staticFileRoutes, ...avatarRoutes, ...healthRoutes, ...metricsRoutes];
