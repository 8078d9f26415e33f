/// Placeholder replaced by the server issue.
public enum VisualSearchServerPlaceholder {}
