def test_lead_expert_sees_item_list_with_demo_item(taxonomy, lead, login):
    from tests.factories import make_item

    make_item(uid="smoke-1", user=lead)
    client = login(lead)
    response = client.get("/items/")
    assert response.status_code == 200
    assert b"smoke-1" in response.content
