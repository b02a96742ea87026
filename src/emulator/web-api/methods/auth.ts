/** auth.test: who the token belongs to (Bolt calls it at start). */
import { ok, type WebApiMethod } from '../method.ts';

export const authTest: WebApiMethod = {
  run(_args, { workspace }) {
    const { identity } = workspace;
    return ok({
      url: `https://${identity.teamDomain}.slack.com/`,
      team: identity.teamName,
      user: identity.botUserName,
      team_id: identity.teamId,
      user_id: identity.botUserId,
      bot_id: identity.botId,
      is_enterprise_install: false,
    });
  },
};
