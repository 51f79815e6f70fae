// Small progressive enhancements; every page works without JavaScript.
document.addEventListener("keydown", (event) => {
  // Ctrl/Cmd+S saves the revision in the item editor.
  if ((event.ctrlKey || event.metaKey) && event.key === "s") {
    const editor = document.getElementById("item-editor");
    if (editor) { event.preventDefault(); editor.requestSubmit(); }
  }
});
