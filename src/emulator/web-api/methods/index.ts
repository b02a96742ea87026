/** Every Web API method the emulator speaks, by name. Anything else is `unknown_method`. */
import type { WebApiMethod } from '../method.ts';
import { appsConnectionsOpen } from './apps.ts';
import { authTest } from './auth.ts';
import { chatDelete, chatGetPermalink, chatPostEphemeral, chatPostMessage, chatUpdate } from './chat.ts';
import { conversationsHistory, conversationsOpen, conversationsReplies } from './conversations.ts';
import { usergroupsUsersList, usersInfo } from './users.ts';
import { viewsOpen, viewsPublish, viewsPush, viewsUpdate } from './views.ts';

export const WEB_API_METHODS: Readonly<Record<string, WebApiMethod>> = {
  'apps.connections.open': appsConnectionsOpen,
  'auth.test': authTest,
  'chat.postMessage': chatPostMessage,
  'chat.update': chatUpdate,
  'chat.delete': chatDelete,
  'chat.postEphemeral': chatPostEphemeral,
  'chat.getPermalink': chatGetPermalink,
  'conversations.open': conversationsOpen,
  'conversations.history': conversationsHistory,
  'conversations.replies': conversationsReplies,
  'views.open': viewsOpen,
  'views.push': viewsPush,
  'views.update': viewsUpdate,
  'views.publish': viewsPublish,
  'users.info': usersInfo,
  'usergroups.users.list': usergroupsUsersList,
};
