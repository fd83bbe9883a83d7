// Test-only language model for the @dsh end-to-end test. It answers "ECHO-B64 ", then
// base64(JSON array of the texts of the messages it received), then " ECHO-END", so the
// test can read back exactly what the participant sent, in order, from the chat answer.
// It registers under the vendor "copilot" with isDefault (proposed API chatProvider, enabled
// with --enable-proposed-api): VS Code only gives chat requests a default model from that
// vendor, and there is no Copilot sign-in in the test.
'use strict';
const vscode = require('vscode');

exports.activate = function activate(context) {
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('copilot', {
    async provideLanguageModelChatInformation() {
      return [{
        id: 'dsh-echo', name: 'Echo (dsh test)', family: 'echo', version: '1',
        maxInputTokens: 1000000, maxOutputTokens: 100000, capabilities: {},
        isUserSelectable: true, isDefault: true,
      }];
    },
    async provideLanguageModelChatResponse(_model, messages, _options, progress) {
      const texts = messages.map((m) => m.content.map((p) => (typeof p.value === 'string' ? p.value : '')).join(''));
      // ECHO-END marks the end: the chat view renders an answer progressively
      progress.report(new vscode.LanguageModelTextPart('ECHO-B64 ' + Buffer.from(JSON.stringify(texts)).toString('base64') + ' ECHO-END'));
    },
    async provideTokenCount(_model, text) {
      return typeof text === 'string' ? Math.ceil(text.length / 4) : 1;
    },
  }));
};
