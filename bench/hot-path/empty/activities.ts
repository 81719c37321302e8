export interface EmptyActivities {
  nothing(): Promise<void>;
}

export const emptyActivities: EmptyActivities = {
  async nothing() {},
};
