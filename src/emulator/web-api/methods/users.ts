/** users.info and usergroups.users.list. */
import { z } from 'zod';
import { parseArgs } from '../args.ts';
import { fail, ok, type WebApiMethod } from '../method.ts';

const InfoArgs = z.object({ user: z.string().optional() });

export const usersInfo: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(InfoArgs, raw);
    if (!parsed.ok) return parsed.response;
    const user = parsed.value.user === undefined ? undefined : workspace.user(parsed.value.user);
    return user ? ok({ user }) : fail('user_not_found');
  },
};

const GroupArgs = z.object({ usergroup: z.string().optional() });

export const usergroupsUsersList: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(GroupArgs, raw);
    if (!parsed.ok) return parsed.response;
    const group =
      parsed.value.usergroup === undefined ? undefined : workspace.usergroup(parsed.value.usergroup);
    return group ? ok({ users: group.users }) : fail('no_such_subteam');
  },
};
