// The example's hooks on `todo`: validation (a title is required, at most 200 characters), a derived field (a todo
// without a priority gets 1), and after a todo is created for someone, a push to that user's devices.
/// <reference path="../../../sandbox/burrow.d.ts" />

export const hooks: Burrow.Hooks = {
  todo: {
    beforeCreate(change) {
      const title = typeof change.object.title === "string" ? change.object.title.trim() : "";
      if (title === "") throw reject(422, "a todo needs a title");
      if (title.length > 200) throw reject(422, "a todo's title has at most 200 characters");
      return { ...change.object, title, priority: typeof change.object.priority === "number" ? change.object.priority : 1 };
    },
    beforeUpdate(change) {
      if (change.changes && "title" in change.changes && String(change.object.title ?? "").trim() === "")
        throw reject(422, "a todo keeps a title");
    },
    async afterCreate(change, { push, log }) {
      const assignee = change.object?.assignee;
      if (typeof assignee !== "string" || assignee === change.user) return;
      // Once per change even if this hook is tried again: the change's id names the notification.
      const { queued } = await push.sendToUsers([assignee], {
        alert: `New todo: ${String(change.object?.title ?? "")}`,
        data: { todo: change.key, change: change.id },
      });
      log.info(`todo ${change.key}: ${queued} notification(s) to ${assignee}`);
    },
  },
};
